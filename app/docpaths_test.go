package app

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var (
	// repoPath is a path from the repository's root as the docs write
	// one: a top-level directory, then names. What follows it is checked
	// for a pattern (`app/…`, `cmd/*`, `<version>`), which is not a path.
	repoPath = regexp.MustCompile("(?:^|[\\s(`\"'\\[])((?:app|cmd|sandbox|packaging|assets|docs|\\.ci)/[A-Za-z0-9_.\\-/]*[A-Za-z0-9_\\-/])([^\\s`)\"',;:.]?)")
	// mdLink is the target of a relative markdown link.
	mdLink = regexp.MustCompile(`\]\(((?:\.\./|\./)?[A-Za-z0-9_.\-/]+)(?:#[^)]*)?\)`)
)

// TestDocPathsExist: every file or directory that README.md, docs/*.md
// and sandbox/README.md name from the repository's root (such as
// `app/deps_test.go` or `cmd/mcp-sandbox-window`), and every relative
// link in them, exists, so that the docs cannot cite code that is gone.
func TestDocPathsExist(t *testing.T) {
	root := ".."
	docs, err := filepath.Glob(filepath.Join(root, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range docs {
		docs[i], _ = filepath.Rel(root, docs[i])
	}
	for _, doc := range append([]string{"README.md", filepath.Join("sandbox", "README.md")}, docs...) {
		data, err := os.ReadFile(filepath.Join(root, doc))
		if err != nil {
			t.Fatal(err)
		}
		text := string(data)
		n := 0
		for _, m := range repoPath.FindAllStringSubmatch(text, -1) {
			if strings.ContainsAny(m[2], "…*<{") {
				continue
			}
			n++
			if _, err := os.Stat(filepath.Join(root, filepath.FromSlash(m[1]))); err != nil {
				t.Errorf("%s names %s, which does not exist", doc, m[1])
			}
		}
		for _, m := range mdLink.FindAllStringSubmatch(text, -1) {
			p := filepath.Join(root, filepath.Dir(doc), filepath.FromSlash(m[1]))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", doc, m[1])
			}
		}
		if n == 0 && filepath.Dir(doc) != "docs" {
			t.Errorf("%s: no path found; the check would prove nothing", doc)
		}
	}
}
