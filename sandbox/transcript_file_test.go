package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestTranscriptFileWritten: the owning server writes each sandbox's
// transcript beside its record (the window, another process, reads it),
// no larger than the in-memory cap, and removes it with the sandbox.
func TestTranscriptFileWritten(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	mustExec(t, eng, sb.ID, "echo first-command-output")
	p := filepath.Join(te.st.Dir(), "sandboxes", sb.ID+".log")
	waitFile(t, te.st, sb.ID, func(s string) bool { return strings.Contains(s, "first-command-output") })
	// Enough output to pass the cap: each entry keeps up to 4 KiB of
	// stdout and of stderr.
	for range 40 {
		mustExec(t, eng, sb.ID, "head -c 6000 /dev/zero | tr '\\0' o; head -c 6000 /dev/zero | tr '\\0' e >&2; echo last-marker")
	}
	waitFile(t, te.st, sb.ID, func(s string) bool {
		return strings.Contains(s, "older entries dropped") && !strings.Contains(s, "first-command-output")
	})
	if fi, err := os.Stat(p); err != nil || fi.Size() > state.TranscriptMax {
		t.Fatalf("transcript file: %v, size beyond %d", err, state.TranscriptMax)
	}
	if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := os.Stat(p)
		if os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("transcript file still there after stop: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	// A late flush must not bring it back.
	time.Sleep(1500 * time.Millisecond)
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatalf("transcript file written again after stop: %v", err)
	}
}

// waitFile polls sandbox id's transcript file until ok says yes.
func waitFile(t *testing.T, st *state.Store, id string, ok func(string) bool) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, err := st.ReadTranscript(id)
		if err == nil && ok(s) {
			return
		}
		if err != nil && !errors.Is(err, state.ErrNoRecord) {
			t.Fatal(err)
		}
		if time.Now().After(deadline) {
			t.Fatalf("transcript file of %s never as expected: %v; %d bytes, ending %q", id, err, len(s), s[max(0, len(s)-200):])
		}
		time.Sleep(50 * time.Millisecond)
	}
}
