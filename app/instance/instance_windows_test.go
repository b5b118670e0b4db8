package instance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/sys/windows"
)

// Run on Windows, or on Linux under Wine by packaging/windows/test/wine.sh
// (the named pipe is what the tray uses there instead of a unix socket).

func TestPipePerStateDir(t *testing.T) {
	a, b := testDir(t), testDir(t)
	pa, err := endpoint(a)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := endpoint(b)
	if !strings.HasPrefix(pa, pipePrefix) || pa == pb {
		t.Fatalf("endpoints %q and %q: want two distinct pipes under %s", pa, pb, pipePrefix)
	}
	// Windows paths are case-insensitive: one directory, one pipe.
	up, _ := endpoint(strings.ToUpper(a))
	rel, _ := endpoint(filepath.Join(a, "x", ".."))
	if up != pa || rel != pa {
		t.Errorf("the same directory spelt otherwise gives %q and %q, want %q", up, rel, pa)
	}
}

// TestPipeTakenIsAnError: a pipe of that name made by someone else (a
// squatter, or a tray whose lock file was deleted) is not silently shared.
func TestPipeTakenIsAnError(t *testing.T) {
	if underWine() {
		t.Skip("under Wine 8 a second listener can create a pipe whose name is taken; Windows refuses it (FILE_CREATE)")
	}
	dir := testDir(t)
	ep, _ := endpoint(dir)
	squat, err := listen(ep)
	if err != nil {
		t.Fatal(err)
	}
	defer squat.Close()
	inst, err := Acquire(dir)
	if err == nil {
		inst.Close()
		t.Fatal("Acquire succeeded while another listener held the pipe")
	}
}

// testDir is t.TempDir, except that under Wine a failed clean-up is
// logged, not a failure: Go 1.26's os.RemoveAll asks for a file
// disposition Wine 8 does not implement ("Invalid function").
func testDir(t *testing.T) string {
	if !underWine() {
		return t.TempDir()
	}
	dir, err := os.MkdirTemp("", "instance-test-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("under Wine, left %s: %v", dir, err)
		}
	})
	return dir
}

func underWine() bool {
	return windows.NewLazySystemDLL("ntdll.dll").NewProc("wine_get_version").Find() == nil
}
