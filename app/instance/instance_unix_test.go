//go:build !windows

package instance

import (
	"os"
	"path/filepath"
	"testing"
)

func TestStaleSocketIsReplaced(t *testing.T) {
	dir := testDir(t)
	// A socket file left by a tray that crashed, with no lock held.
	os.WriteFile(filepath.Join(dir, "tray.sock"), nil, 0o600)
	inst, err := Acquire(dir)
	if err != nil {
		t.Fatalf("Acquire with a stale socket = %v", err)
	}
	inst.Close()
}

func testDir(t *testing.T) string { return t.TempDir() }
