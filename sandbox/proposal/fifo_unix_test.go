//go:build unix

package proposal

import (
	"context"
	"path/filepath"
	"syscall"
	"testing"
)

// TestHostFIFO: a FIFO on the host where the sandbox has a file is
// skipped without hanging, and never proposed for deletion.
func TestHostFIFO(t *testing.T) {
	w := newWorld(t)
	if err := syscall.Mkfifo(filepath.Join(w.home, "proj", "pipe"), 0o600); err != nil {
		t.Skip("no FIFO here:", err)
	}
	syscall.Mkfifo(filepath.Join(w.home, "proj", "pipe2"), 0o600)
	w.req.Delete = true
	p, err := Build(context.Background(), project(t, ent{name: "proj/pipe", body: "data\n"}), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || len(p.Skipped) != 1 || p.Skipped[0].Path != "pipe" {
		t.Fatalf("files %+v, skipped %+v", p.Result(StatusPending).Files, p.Skipped)
	}
}
