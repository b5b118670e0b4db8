package filebackup

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestCreateListPrune(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "settings.json")
	others := []string{"settings.json.mine.bak", "settings.json.bak", "other.json.20250101-000000.bak"}
	for _, o := range others {
		if err := os.WriteFile(filepath.Join(dir, o), []byte("not ours"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clock := time.Date(2025, 1, 2, 23, 59, 58, 0, time.UTC)
	var made []string
	for i := range 8 {
		p, err := Create(file, []byte{byte('a' + i)}, 0o640, clock)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, p)
		if i%3 != 1 { // now and then two within one second
			clock = clock.Add(time.Second)
		}
	}
	if diff := cmp.Diff(made, List(file)); diff != "" {
		t.Fatalf("List before pruning (-made +listed):\n%s", diff)
	}
	if got := filepath.Base(made[2]); got != "settings.json.20250102-235959-2.bak" {
		t.Errorf("second backup within a second named %s", got)
	}
	if fi, err := os.Stat(made[0]); err != nil || fi.Mode().Perm() != 0o640 {
		t.Errorf("backup mode: %v %v, want 0640", fi, err)
	}
	Prune(file)
	want := append([]string{made[0]}, made[len(made)-(Keep-1):]...)
	if diff := cmp.Diff(want, List(file)); diff != "" {
		t.Errorf("after Prune (-want +got):\n%s", diff)
	}
	if Latest(file) != made[len(made)-1] {
		t.Errorf("Latest = %s, want %s", Latest(file), made[len(made)-1])
	}
	for _, o := range others {
		if b, err := os.ReadFile(filepath.Join(dir, o)); err != nil || string(b) != "not ours" {
			t.Errorf("%s was touched: %q %v", o, b, err)
		}
	}
}
