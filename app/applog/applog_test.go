package applog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRotates(t *testing.T) {
	dir := t.TempDir()
	w, err := Open(dir, "tray", Options{MaxBytes: 100, Keep: 2})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	line := strings.Repeat("x", 39) + "\n" // 40 bytes: two fit in a file
	for i := 0; i < 7; i++ {
		if _, err := w.Write([]byte(line)); err != nil {
			t.Fatal(err)
		}
	}
	sizes := map[string]int64{}
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		fi, _ := e.Info()
		sizes[e.Name()] = fi.Size()
	}
	want := map[string]int64{"tray.log": 40, "tray.log.1": 80, "tray.log.2": 80, "tray.log.lock": 0}
	if diff := cmp.Diff(want, sizes); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	if fi, _ := os.Stat(filepath.Join(dir, "tray.log")); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestOpenRotatesAnOversizedFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tray.log")
	os.WriteFile(p, []byte(strings.Repeat("y", 200)), 0o600)
	w, err := Open(dir, "tray", Options{MaxBytes: 100})
	if err != nil {
		t.Fatal(err)
	}
	w.Write([]byte("new\n"))
	w.Close()
	if got, _ := os.ReadFile(p); string(got) != "new\n" {
		t.Errorf("log = %q, want a fresh file", got)
	}
	if fi, err := os.Stat(p + ".1"); err != nil || fi.Size() != 200 {
		t.Errorf("old log not rotated to .1: %v", err)
	}
	if _, err := w.Write([]byte("late")); err == nil {
		t.Error("Write after Close succeeded")
	}
}
