package codestyle

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxLines is the longest a function outside tests may be, from its func
// line to its closing brace.
const maxLines = 80

// tooLong lists the functions that were longer than maxLines when this test
// came, each with its length then: it may only shrink. A function split
// below the limit must leave the list (the test says so), and no new one
// may join it.
var tooLong = map[string]int{}

// TestFunctionLength: no function in a non-test Go file of the module is
// longer than maxLines, but for those in tooLong, which may not grow.
func TestFunctionLength(t *testing.T) {
	got := longFunctions(t, moduleRoot(t))
	for name, n := range got {
		switch was, listed := tooLong[name]; {
		case !listed:
			t.Errorf("%s is %d lines, more than %d: split it into steps with names", name, n, maxLines)
		case n > was:
			t.Errorf("%s grew to %d lines (it was %d, already more than %d): split it", name, n, was, maxLines)
		}
	}
	for name := range tooLong {
		if _, ok := got[name]; !ok {
			t.Errorf("%s is no longer over %d lines (or is gone): take it off tooLong", name, maxLines)
		}
	}
}

// longFunctions maps "path:Func" (path from the module root, Func with its
// receiver type as Type.Func) to the length of each function longer than
// maxLines in the non-test Go files under root.
func longFunctions(t *testing.T, root string) map[string]int {
	t.Helper()
	out := map[string]int{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); path != root && (n == "testdata" || n == "vendor" || strings.HasPrefix(n, ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			n := fset.Position(fn.End()).Line - fset.Position(fn.Pos()).Line + 1
			if n > maxLines {
				out[filepath.ToSlash(rel)+":"+funcName(fn)] = n
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// funcName is Func, or Type.Func for a method.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	typ := fn.Recv.List[0].Type
	for {
		switch x := typ.(type) {
		case *ast.StarExpr:
			typ = x.X
			continue
		case *ast.IndexExpr:
			typ = x.X
			continue
		case *ast.IndexListExpr:
			typ = x.X
			continue
		case *ast.Ident:
			return x.Name + "." + fn.Name.Name
		}
		return fn.Name.Name
	}
}

// moduleRoot is the directory of go.mod above this package.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test's directory")
		}
		dir = parent
	}
}

// TestLongFunctionsFindsOne: the scan counts from func to the closing
// brace and names methods by their type.
func TestLongFunctionsFindsOne(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("\t_ = 1\n", maxLines-2)
	src := "package p\n\ntype T struct{}\n\nfunc (*T) Fits() {\n" + body + "}\n\nfunc Over() {\n" + body + "\t_ = 2\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "p.go"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "p_test.go"), []byte("package p\n\nfunc Long() {\n"+strings.Repeat("\t_ = 1\n", 200)+"}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := longFunctions(t, dir)
	names := make([]string, 0, len(got))
	for k := range got {
		names = append(names, k)
	}
	slices.Sort(names)
	if len(names) != 1 || names[0] != "p.go:Over" || got["p.go:Over"] != maxLines+1 {
		t.Errorf("long functions %v, want p.go:Over at %d lines", got, maxLines+1)
	}
}
