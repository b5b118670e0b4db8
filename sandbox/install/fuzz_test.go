package install

import (
	"strings"
	"testing"
)

// FuzzCheckPackages: an accepted package name can never be read by pip or
// npm as an option, a URL, a path or more than one argument.
func FuzzCheckPackages(f *testing.F) {
	for _, s := range []string{"numpy==1.26", "requests[socks]>=2", "lodash@4", "@scope/pkg@^1.2", "--index-url=http://x", "-e.", "git+https://x/y", "./local", "a b", "a;rm", "file:../x", "a@http://x", "a.tgz", "x-1.0-py3-none-any.whl", "user/repo"} {
		f.Add("pip", s)
		f.Add("npm", s)
	}
	f.Fuzz(func(t *testing.T, manager, name string) {
		if manager != "npm" {
			manager = "pip"
		}
		if CheckPackages(manager, []string{name}) != nil {
			return
		}
		switch {
		case strings.HasPrefix(name, "-"):
			t.Fatalf("%s accepted an option: %q", manager, name)
		case strings.ContainsAny(name, " \t\r\n\x00;|&$`'\"\\(){}"):
			t.Fatalf("%s accepted whitespace or a shell character: %q", manager, name)
		case strings.Contains(name, "://"), strings.Contains(name, ":"):
			t.Fatalf("%s accepted a URL or a spec with a scheme: %q", manager, name)
		case strings.HasPrefix(name, ".") || strings.HasPrefix(name, "/") || strings.HasPrefix(name, "~"):
			t.Fatalf("%s accepted a path: %q", manager, name)
		case strings.Contains(name, "/") && !(manager == "npm" && strings.HasPrefix(name, "@") && strings.Count(name, "/") == 1):
			t.Fatalf("%s accepted a path or a GitHub shorthand: %q", manager, name)
		case hasAnySuffix(strings.ToLower(name), ".tgz", ".tar", ".whl", ".zip", ".tar.gz"):
			t.Fatalf("%s accepted what it would read as a local file: %q", manager, name)
		}
	})
}

func hasAnySuffix(s string, suffixes ...string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}
