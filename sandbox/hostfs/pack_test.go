package hostfs

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func tarNames(t *testing.T, b []byte) []string {
	t.Helper()
	var names []string
	tr := tar.NewReader(bytes.NewReader(b))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n := h.Name
		if h.Typeflag == tar.TypeSymlink {
			n += " -> " + h.Linkname
		}
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

func TestPlanSkipsGitAndIgnored(t *testing.T) {
	src := t.TempDir()
	files := map[string]string{
		".gitignore":          "*.log\nbuild/\n/secret.env\n!keep.log\n",
		"main.py":             "print(1)",
		"debug.log":           "x",
		"keep.log":            "kept",
		"build/out.bin":       "x",
		"secret.env":          "TOKEN=1",
		"sub/secret.env":      "not anchored: kept",
		"sub/.gitignore":      "*.tmp\n",
		"sub/a.tmp":           "x",
		"sub/b.txt":           "b",
		".git/config":         "[core]",
		"docs/deep/x/y.log":   "x",
		"node_modules/m/i.js": "x",
	}
	for name, content := range files {
		p := filepath.Join(src, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o644))
	}
	must(t, os.Symlink("/etc/passwd", filepath.Join(src, "link")))
	mkfifo(t, filepath.Join(src, "fifo"))
	f := Fence{MaxBytes: 1 << 20, ReadRoots: []string{src}}
	p, err := f.Plan(context.Background(), src, PackOptions{Name: "proj", UID: 1000, GID: 1000})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := p.WriteTar(context.Background(), &buf); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"proj/", "proj/.gitignore", "proj/docs/", "proj/docs/deep/", "proj/docs/deep/x/",
		"proj/keep.log", "proj/link -> /etc/passwd", "proj/main.py",
		"proj/node_modules/", "proj/node_modules/m/", "proj/node_modules/m/i.js",
		"proj/sub/", "proj/sub/.gitignore", "proj/sub/b.txt", "proj/sub/secret.env",
	}
	if diff := cmp.Diff(want, tarNames(t, buf.Bytes())); diff != "" {
		t.Errorf("entries (-want +got):\n%s", diff)
	}
	wantSkipped := map[string]int{".git": 1, "gitignored": 5, "special file": 1}
	if diff := cmp.Diff(wantSkipped, p.Stats.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	// Owners are the sandbox user.
	tr := tar.NewReader(bytes.NewReader(buf.Bytes()))
	for h, err := tr.Next(); err == nil; h, err = tr.Next() {
		if h.Uid != 1000 || h.Gid != 1000 || h.Mode&0o7000 != 0 {
			t.Errorf("%s: uid %d gid %d mode %o", h.Name, h.Uid, h.Gid, h.Mode)
		}
	}

	all, err := f.Plan(context.Background(), src, PackOptions{Name: "proj", IncludeIgnored: true})
	if err != nil {
		t.Fatal(err)
	}
	if all.Stats.Files != len(files) {
		t.Errorf("with include_ignored: %d files, want %d", all.Stats.Files, len(files))
	}
}

func TestPlanLimits(t *testing.T) {
	src := t.TempDir()
	must(t, os.WriteFile(filepath.Join(src, "big"), make([]byte, 3<<20), 0o644))
	f := Fence{MaxBytes: 2 << 20, ReadRoots: []string{src}}
	if _, err := f.Plan(context.Background(), src, PackOptions{Name: "x"}); !errors.Is(err, ErrTooBig) {
		t.Errorf("3 MB under a 2 MB limit: %v", err)
	}
	many := t.TempDir()
	for i := 0; i < 30; i++ {
		must(t, os.WriteFile(filepath.Join(many, string(rune('a'+i%26))+string(rune('a'+i/26))), nil, 0o644))
	}
	f = Fence{MaxFiles: 10, ReadRoots: []string{many}}
	if _, err := f.Plan(context.Background(), many, PackOptions{Name: "x"}); !errors.Is(err, ErrTooBig) {
		t.Errorf("30 files under a 10-file limit: %v", err)
	}
}

func TestWriteTarFileShrank(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "f")
	must(t, os.WriteFile(p, make([]byte, 1000), 0o644))
	plan, err := Fence{ReadRoots: []string{src}}.Plan(context.Background(), p, PackOptions{Name: "f"})
	if err != nil {
		t.Fatal(err)
	}
	must(t, os.WriteFile(p, make([]byte, 10), 0o644))
	if err := plan.WriteTar(context.Background(), io.Discard); err == nil {
		t.Error("a file that shrank after planning was not reported")
	}
}

func TestGitignorePatterns(t *testing.T) {
	ig := &ignorer{files: []ignoreFile{parseGitignore("", `
# comment
*.pyc
/dist
logs/
**/tmp/**
a/**/z.txt
\#hash
[ab].md
!important.pyc
`)}}
	for _, tc := range []struct {
		p     string
		isDir bool
		want  bool
	}{
		{"x.pyc", false, true},
		{"deep/x.pyc", false, true},
		{"important.pyc", false, false},
		{"dist", true, true},
		{"sub/dist", true, false},
		{"logs", true, true},
		{"logs", false, false},
		{"a/logs", true, true},
		{"q/tmp/f", false, true},
		{"a/z.txt", false, true},
		{"a/b/c/z.txt", false, true},
		{"#hash", false, true},
		{"a.md", false, true},
		{"c.md", false, false},
		{"main.py", false, false},
	} {
		if got := ig.ignored(tc.p, tc.isDir); got != tc.want {
			t.Errorf("ignored(%q, dir=%v) = %v, want %v", tc.p, tc.isDir, got, tc.want)
		}
	}
}
