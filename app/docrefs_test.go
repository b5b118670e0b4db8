package app

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The names are built so that this file does not match itself.
var (
	designDoc   = "DESIGN" + ".md"
	outsideDocs = []string{".." + "/shared", "/work" + "/shared"}
	// sectionRef is a pointer into the contributor reference, such as
	// "sandbox/README.md §Configuration" (a comment marker may sit between).
	sectionRef = regexp.MustCompile(`sandbox/README\.md[\s/#]*§([A-Za-z][A-Za-z ]*[A-Za-z])`)
)

// TestDocReferencesResolve keeps the contract inside the repository: no
// file may point at a design document that is not in it (the contract
// lives in sandbox/README.md), nor at a directory beside the checkout, and
// every pointer into sandbox/README.md (a § and a title) names a section
// that exists.
func TestDocReferencesResolve(t *testing.T) {
	root := ".."
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("run from app/: %v", err)
	}
	sections := readmeSections(t, filepath.Join(root, "sandbox", "README.md"))
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if d.IsDir() {
			switch d.Name() {
			case ".git", "bin", "dist", ".cache", "node_modules":
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.IndexByte(data, 0) >= 0 {
			return nil // binary
		}
		text := string(data)
		if strings.Contains(text, designDoc) {
			if _, err := os.Stat(filepath.Join(root, designDoc)); err != nil {
				t.Errorf("%s mentions %s, which is not in the repository: point at sandbox/README.md instead", rel, designDoc)
			}
		}
		for _, o := range outsideDocs {
			if strings.Contains(text, o) {
				t.Errorf("%s refers to %s, outside the repository", rel, o)
			}
		}
		for _, m := range sectionRef.FindAllStringSubmatch(text, -1) {
			if !startsWithSection(m[1], sections) {
				t.Errorf("%s: %q names no section of sandbox/README.md (sections: %s)", rel, m[0], strings.Join(sections, "; "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// readmeSections returns the titles of the headings of the markdown file
// at p, without a trailing "(contract)".
func readmeSections(t *testing.T, p string) []string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatalf("the contributor reference: %v", err)
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n") {
		if title, ok := strings.CutPrefix(line, "#"); ok {
			title = strings.TrimSpace(strings.TrimLeft(title, "#"))
			out = append(out, strings.TrimSpace(strings.TrimSuffix(title, "(contract)")))
		}
	}
	return out
}

// startsWithSection reports whether ref (the words after §, which may run
// on into the sentence) begins with a section title.
func startsWithSection(ref string, sections []string) bool {
	for _, s := range sections {
		if ref == s || strings.HasPrefix(ref, s+" ") {
			return true
		}
	}
	return false
}
