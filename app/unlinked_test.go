package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// unlinkedHeading opens the list, in docs/development.md, of the module's
// packages no program links; the list is its bullets up to the next
// blank line after them.
const unlinkedHeading = "## Packages no program links"

// unlinkedItem is one bullet of that list: "* `path` — why".
var unlinkedItem = regexp.MustCompile("^\\* `([^`]+)`")

// TestUnlinkedPackagesListed: docs/development.md names, with a reason,
// exactly the packages of the module that none of the programs links on
// any platform they ship on.
func TestUnlinkedPackagesListed(t *testing.T) {
	const module = "github.com/mcp-sandbox/mcp-sandbox/"
	cmd := exec.Command("go", "list", "./...")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "CGO_ENABLED=1") // the window is cgo-only
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list ./...: %v", err)
	}
	linked := map[string]bool{}
	for _, b := range binaries {
		for _, goos := range platforms {
			for _, p := range nonStdDeps(t, b.pkg, goos, b.cgo) {
				linked[p] = true
			}
		}
	}
	var got []string
	for _, p := range strings.Fields(string(out)) {
		if !linked[p] {
			got = append(got, strings.TrimPrefix(p, module))
		}
	}
	slices.Sort(got)
	want := unlinkedListed(t, filepath.Join("..", "docs", "development.md"))
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("packages no program links (-docs/development.md +go list):\n%s\nsay in docs/development.md's %q list why each is not linked", diff, unlinkedHeading)
	}
}

// unlinkedListed reads the packages the list names, sorted.
func unlinkedListed(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	i := strings.Index(text, unlinkedHeading)
	if i < 0 {
		t.Fatalf("%s has no %q list", path, unlinkedHeading)
	}
	var names []string
	inList := false
	for _, line := range strings.Split(text[i:], "\n")[1:] {
		switch m := unlinkedItem.FindStringSubmatch(line); {
		case m != nil:
			inList = true
			names = append(names, m[1])
		case inList && strings.TrimSpace(line) == "":
			slices.Sort(names)
			return names
		}
	}
	t.Fatalf("%s: the %q list does not end", path, unlinkedHeading)
	return nil
}
