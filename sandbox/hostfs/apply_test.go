package hostfs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestApplyPath(t *testing.T) {
	base, _ := filepath.EvalSymlinks(t.TempDir())
	home := filepath.Join(base, "home")
	for _, d := range []string{"proj", ".ssh", "other"} {
		os.MkdirAll(filepath.Join(home, d), 0o755)
	}
	os.WriteFile(filepath.Join(home, ".bashrc"), []byte("x"), 0o600)
	os.Symlink(filepath.Join(home, ".ssh"), filepath.Join(home, "proj", "keys"))
	f := Fence{Home: home, ReadRoots: []string{"~"}, Deny: []string{"~/.ssh"}, WriteDeny: []string{"~/.bashrc"}}
	roots := []string{"~/proj"}
	for _, tc := range []struct {
		name, p string
		want    error
		says    string
	}{
		{"inside", "~/proj", nil, ""},
		{"missing, parent exists", "~/proj/new", nil, ""},
		{"parent missing", "~/proj/a/b", os.ErrNotExist, "parent directory exists"},
		{"outside apply_roots", "~/other", ErrFence, "files.apply_roots"},
		{"write_deny", "~/.bashrc", ErrDenied, "files.write_deny"},
		{"read_deny through a link", "~/proj/keys", ErrDenied, "files.read_deny"},
		{"relative", "proj", ErrFence, "relative"},
		{"control character", "~/proj/a\nb", ErrFence, "control character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.ApplyPath(tc.p, roots)
			if tc.want == nil {
				if err != nil || !strings.HasPrefix(got, filepath.Join(home, "proj")) {
					t.Fatalf("ApplyPath(%q) = %q, %v", tc.p, got, err)
				}
				return
			}
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.says) {
				t.Errorf("ApplyPath(%q): %v, want %v saying %q", tc.p, err, tc.want, tc.says)
			}
		})
	}
}

func TestIgnorer(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("*.log\nbuild/\n"), 0o600)
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var ig Ignorer
	ig.Load(r, "")
	if !ig.Ignored("a.log", false) || !ig.Ignored("build", true) || ig.Ignored("a.py", false) {
		t.Error("Ignorer does not follow .gitignore")
	}
}
