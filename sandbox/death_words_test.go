package sandbox

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// A gVisor sandbox that exits with code 2 is one whose processes most
// likely filled its pids limit (gVisor could not start a thread): the
// words say so, with the limit; under runc code 2 is just an exit code.
func TestDiedWordsGVisorExit2(t *testing.T) {
	d := &diedError{id: "x", pids: 64, exit: backend.ContainerExit{ExitCode: 2, Runtime: "runsc"}}
	if w := d.what(); !strings.Contains(w, "pids limit (64") || !strings.Contains(w, "fork bomb") {
		t.Errorf("runsc exit 2: %q", w)
	}
	d.exit.Runtime = "runc"
	if w := d.what(); w != "stopped: its container exited with code 2" {
		t.Errorf("runc exit 2: %q", w)
	}
}
