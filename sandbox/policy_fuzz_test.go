package sandbox_test

import (
	"path"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// FuzzResolvePath: a path from a tool call resolves to /workspace, /tmp or
// below them, clean, or is refused.
func FuzzResolvePath(f *testing.F) {
	for _, s := range []string{"", "a", "/workspace/../etc/passwd", "../../tmp/../etc", "/tmp", "/tmpx", "//workspace//a/./b/..", "a/\x00b", "/workspace\n/etc"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := sandbox.ResolvePath(p)
		if err != nil {
			return
		}
		if got != path.Clean(got) {
			t.Fatalf("%q resolved to %q, which is not clean", p, got)
		}
		if got != backend.Workspace && !strings.HasPrefix(got, backend.Workspace+"/") && got != "/tmp" && !strings.HasPrefix(got, "/tmp/") {
			t.Fatalf("%q resolved to %q, outside /workspace and /tmp", p, got)
		}
		if strings.ContainsAny(got, "\x00\n\r") {
			t.Fatalf("%q resolved to %q, which holds a NUL or line break", p, got)
		}
	})
}

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
		if sandbox.CheckPackages(manager, []string{name}) != nil {
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
