package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.json")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(p, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("content = %q, %v; want new", got, err)
	}
	st, _ := os.Stat(p)
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode = %v, want 0600", st.Mode().Perm())
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

func TestWriteFileMissingDir(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope", "f")
	if err := WriteFile(p, []byte("x"), 0o600); err == nil {
		t.Fatal("want an error for a missing directory")
	}
}

func TestWriteCheckAborts(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("changed meanwhile")
	prepared := false
	err := Write(p, []byte("new"), 0o600, Options{
		Prepare: func(*os.File) error { prepared = true; return nil },
		Check:   func() error { return stop },
	})
	if !errors.Is(err, stop) || !prepared {
		t.Fatalf("err = %v, prepared = %v", err, prepared)
	}
	if got, _ := os.ReadFile(p); string(got) != "old" {
		t.Errorf("content = %q after an aborted write", got)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 1 {
		t.Errorf("temp files left behind: %v", ents)
	}
}

func TestWriteIn(t *testing.T) {
	dir := t.TempDir()
	r, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := WriteIn(r, "f", []byte("one"), 0o600, Options{}); err != nil {
		t.Fatal(err)
	}
	stop := errors.New("changed")
	err = WriteIn(r, "f", []byte("two"), 0o600, Options{Check: func() error { return stop }})
	if !errors.Is(err, stop) {
		t.Fatalf("Check's error: %v", err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "f"))
	ents, _ := os.ReadDir(dir)
	if string(b) != "one" || len(ents) != 1 {
		t.Errorf("after a refused write: %q, %d entries", b, len(ents))
	}
}
