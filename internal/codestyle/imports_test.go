package codestyle

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/mcp-sandbox/mcp-sandbox"

// listedPackage is what TestImportsMatchDoc reads of `go list -json`.
type listedPackage struct {
	ImportPath string
	Dir        string
	GoFiles    []string
	CgoFiles   []string
	Imports    []string
}

// TestImportsMatchDoc: every package of the module (a directory with
// non-test Go files) has a doc.go whose package comment ends with a line
// "// Imports: a/b, c" naming, relative to the module root and sorted,
// the module packages it may import (or "none"), and imports no other
// module package (linux, default build tags, with cgo; tests aside).
func TestImportsMatchDoc(t *testing.T) {
	pkgs := listPackages(t, moduleRoot(t))
	known := map[string]bool{}
	for _, p := range pkgs {
		known[rel(p.ImportPath)] = true
	}
	for _, p := range pkgs {
		if len(p.GoFiles)+len(p.CgoFiles) == 0 {
			continue
		}
		for _, msg := range checkImports(p, known) {
			t.Errorf("%s: %s", rel(p.ImportPath), msg)
		}
	}
}

// checkImports returns what is wrong with p's doc.go line against its
// imports; known holds the module's packages (relative paths).
func checkImports(p listedPackage, known map[string]bool) []string {
	may, err := docImports(filepath.Join(p.Dir, "doc.go"))
	if err != nil {
		return []string{err.Error()}
	}
	var msgs []string
	for _, m := range may {
		if !known[m] {
			msgs = append(msgs, "doc.go's Imports line names "+m+", not a package of the module: correct or remove it")
		}
	}
	for _, imp := range p.Imports {
		if r, ok := strings.CutPrefix(imp, module+"/"); ok && !slices.Contains(may, r) || imp == module && !slices.Contains(may, ".") {
			msgs = append(msgs, "imports "+rel(imp)+", which doc.go's Imports line does not list: add it there if this package may depend on it, else drop the import")
		}
	}
	return msgs
}

// docImports reads the "// Imports:" line that ends the package comment
// of the doc.go at path: nil for "none".
func docImports(path string) ([]string, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, errors.New("no doc.go: add one that says what the package owns and ends with a line // Imports: (module packages it may import, or none)")
	}
	if err != nil {
		return nil, err
	}
	src := string(b)
	i := strings.Index(src, "\npackage ")
	if i < 0 {
		return nil, errors.New("doc.go has no package clause")
	}
	lines := strings.Split(src[:i], "\n")
	last, ok := strings.CutPrefix(lines[len(lines)-1], "// Imports: ")
	if !ok {
		return nil, errors.New("doc.go's package comment does not end with a line // Imports: a/b, c/d (module packages it may import, relative to the module root, sorted; or none)")
	}
	if last == "none" {
		return nil, nil
	}
	may := strings.Split(last, ", ")
	if !slices.IsSorted(may) || slices.Contains(may, "") || slices.ContainsFunc(may, func(s string) bool { return strings.ContainsAny(s, " ,") }) {
		return nil, errors.New("doc.go's Imports line is not a sorted list separated by \", \": " + last)
	}
	return may, nil
}

// listPackages runs go list -json ./... in root for linux with cgo (the
// build the programs ship as; the window is cgo-only).
func listPackages(t *testing.T, root string) []listedPackage {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Dir,GoFiles,CgoFiles,Imports", "./...")
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1", "GOFLAGS=")
	out, err := cmd.Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			t.Fatalf("go list ./...: %v\n%s", err, ee.Stderr)
		}
		t.Fatalf("go list ./...: %v", err)
	}
	var pkgs []listedPackage
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p listedPackage
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	if len(pkgs) < 10 {
		t.Fatalf("go list ./... found %d packages: is this the module?", len(pkgs))
	}
	return pkgs
}

// rel is a module package's path relative to the module root ("." for
// the root itself).
func rel(importPath string) string {
	if importPath == module {
		return "."
	}
	return strings.TrimPrefix(importPath, module+"/")
}

// TestDocImportsFindsAStrayImport: the check names an import the line
// leaves out, a line that lists no such package, and a missing line.
func TestDocImportsFindsAStrayImport(t *testing.T) {
	dir := t.TempDir()
	write := func(src string) {
		if err := os.WriteFile(filepath.Join(dir, "doc.go"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	known := map[string]bool{"sandbox/backend": true, "sandbox/config": true}
	p := listedPackage{ImportPath: module + "/x", Dir: dir, Imports: []string{"fmt", module + "/sandbox/backend", module + "/sandbox/config"}}
	write("// Package x does x.\n//\n// Imports: sandbox/backend\npackage x\n")
	if got := checkImports(p, known); len(got) != 1 || !strings.Contains(got[0], "imports sandbox/config") {
		t.Errorf("an import the line leaves out: %q", got)
	}
	write("// Package x does x.\n//\n// Imports: sandbox/backend, sandbox/config\npackage x\n")
	if got := checkImports(p, known); len(got) != 0 {
		t.Errorf("a line that lists every import: %q", got)
	}
	write("// Package x does x.\n//\n// Imports: sandbox/backend, sandbox/config, sandbox/gone\npackage x\n")
	if got := checkImports(p, known); len(got) != 1 || !strings.Contains(got[0], "sandbox/gone") {
		t.Errorf("a line naming no package: %q", got)
	}
	write("// Package x does x.\npackage x\n")
	if got := checkImports(p, known); len(got) != 1 || !strings.Contains(got[0], "does not end with") {
		t.Errorf("no line: %q", got)
	}
}
