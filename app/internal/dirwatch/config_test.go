package dirwatch

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// TestFollowConfig edits a config file, and the file a symlinked config
// points to, while FollowConfig runs: each edit is in force within
// seconds, long before the safety poll (a minute) would read it.
func TestFollowConfig(t *testing.T) {
	home := t.TempDir()
	dotfiles := filepath.Join(home, "dotfiles")
	cfgDir := filepath.Join(home, "config")
	for _, d := range []string{dotfiles, cfgDir} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	plain := filepath.Join(cfgDir, "config.toml")
	linked := filepath.Join(cfgDir, "linked.toml")
	target := filepath.Join(dotfiles, "mcp-sandbox.toml")
	if err := os.Symlink(target, linked); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, write string }{{plain, plain}, {linked, target}} {
		writePool(t, c.write, 1)
		w, err := config.NewWatcher(c.path, time.Hour, nil)
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go FollowConfig(ctx, w, c.path, nil)
		time.Sleep(200 * time.Millisecond) // the watches are in place
		writePool(t, c.write, 3)
		deadline := time.Now().Add(10 * time.Second)
		for w.Current().Pool.Size != 3 && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		cancel()
		if got := w.Current().Pool.Size; got != 3 {
			t.Errorf("%s: pool size %d 10 s after the edit, want 3 (the edit was not seen)", c.path, got)
		}
	}
}

func writePool(t *testing.T, path string, size int) {
	t.Helper()
	body := "[pool]\nsize = " + string(rune('0'+size)) + "\n"
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
}
