package app

import (
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite cmd/*/deps.txt from go list")

// binaries are the shipped programs; the server builds without cgo, the
// GUI processes with it.
var binaries = []struct {
	pkg string
	cgo bool
}{
	{"./cmd/mcp-sandbox", false},
	{"./cmd/mcp-sandbox-tray", true},
	{"./cmd/mcp-sandbox-window", true},
}

// platforms are the GOOS values the programs ship on.
var platforms = []string{"linux", "darwin", "windows"}

// depsHeader opens every deps.txt: what it is and how to refresh it.
const depsHeader = `# The packages %s links, outside the standard library
# (go list -deps, GOARCH=amd64), one a line. A package linked on some
# platforms only is followed by them in brackets. A change to this file in
# review is a new (or dropped) dependency of the program: look at it.
# Refresh: go test ./app -run TestDeps -update
`

// TestDeps keeps cmd/*/deps.txt equal to what each program links (as
// Tailscale's depaware.txt), so that a new link shows up in review.
func TestDeps(t *testing.T) {
	for _, b := range binaries {
		t.Run(filepath.Base(b.pkg), func(t *testing.T) {
			want := depsList(t, b.pkg, b.cgo)
			path := filepath.Join("..", b.pkg, "deps.txt")
			if *update {
				if err := os.WriteFile(path, []byte(want), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v; create it with: go test ./app -run TestDeps -update", err)
			}
			if string(got) != want {
				t.Errorf("%s is out of date: %s; if the change is meant, refresh it with: go test ./app -run TestDeps -update",
					filepath.ToSlash(filepath.Join(b.pkg, "deps.txt")), depsDiff(string(got), want))
			}
		})
	}
}

// depsList is the content deps.txt must have for pkg.
func depsList(t *testing.T, pkg string, cgo bool) string {
	t.Helper()
	on := map[string][]string{}
	for _, goos := range platforms {
		for _, p := range nonStdDeps(t, pkg, goos, cgo) {
			on[p] = append(on[p], goos)
		}
	}
	names := make([]string, 0, len(on))
	for p := range on {
		names = append(names, p)
	}
	slices.Sort(names)
	var sb strings.Builder
	sb.WriteString(strings.Replace(depsHeader, "%s", strings.TrimPrefix(pkg, "./"), 1))
	for _, p := range names {
		sb.WriteString(p)
		if oses := on[p]; len(oses) < len(platforms) {
			slices.Sort(oses)
			sb.WriteString(" [" + strings.Join(oses, " ") + "]")
		}
		sb.WriteByte('\n')
	}
	return sb.String()
}

// nonStdDeps lists the packages outside the standard library that pkg
// links for goos.
func nonStdDeps(t *testing.T, pkg, goos string, cgo bool) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", pkg)
	cmd.Dir = ".."
	cgoEnv := "CGO_ENABLED=0"
	if cgo {
		cgoEnv = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", cgoEnv)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s (%s): %v\n%s", pkg, goos, err, stderr)
	}
	return strings.Fields(string(out))
}

// depsDiff names the lines only one side has.
func depsDiff(got, want string) string {
	gotLines := strings.Split(got, "\n")
	wantLines := strings.Split(want, "\n")
	var parts []string
	for _, l := range wantLines {
		if !slices.Contains(gotLines, l) {
			parts = append(parts, "+"+l)
		}
	}
	for _, l := range gotLines {
		if !slices.Contains(wantLines, l) {
			parts = append(parts, "-"+l)
		}
	}
	return strings.Join(parts, ", ")
}
