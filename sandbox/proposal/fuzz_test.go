package proposal

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// FuzzBuildApply: whatever tar stream the sandbox sends, Build and Apply
// write nothing outside host_path and never touch a protected file.
func FuzzBuildApply(f *testing.F) {
	for _, es := range [][]ent{
		{{name: "proj/", typ: tar.TypeDir}, {name: "proj/a.py", body: "x\n"}},
		{{name: "proj/", typ: tar.TypeDir}, {name: "proj/../.bashrc", body: "x\n"}},
		{{name: "proj/", typ: tar.TypeDir}, {name: "proj/link", typ: tar.TypeSymlink, link: "../outside"}},
		{{name: "proj/", typ: tar.TypeDir}, {name: "proj/dirlink/x", body: "x\n"}},
	} {
		b, _ := io.ReadAll(tarOf(f, es...))
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, archive []byte) {
		w := newWorld(t)
		os.Symlink(w.outside, filepath.Join(w.home, "proj", "dirlink"))
		p, err := Build(context.Background(), bytes.NewReader(archive), w.req)
		if err == nil {
			Apply(context.Background(), p, w.opts)
		}
		if got := read(t, filepath.Join(w.home, ".bashrc")); got != "export A=1\n" {
			t.Fatalf(".bashrc: %q", got)
		}
		ents, _ := os.ReadDir(w.outside)
		if len(ents) != 1 || read(t, filepath.Join(w.outside, "secret.txt")) != "outside\n" {
			t.Fatalf("outside changed: %v", ents)
		}
		top, _ := os.ReadDir(w.home)
		for _, e := range top {
			if e.Name() != "proj" && e.Name() != ".bashrc" {
				t.Fatalf("%s created outside host_path", e.Name())
			}
		}
	})
}
