package trayapp

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Pause and Start, set through the state directory as the window sets
// them, are notified with only what exists: without an HTTP port in the
// config there is no HTTP server to stop or bring back.
func TestPauseNotificationNamesOnlyWhatExists(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	if err := st.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	paused := d.waitNote(t, "the pause notification", "MCP Sandbox is Paused", "stopped")
	if err := st.SetPaused(false); err != nil {
		t.Fatal(err)
	}
	again := d.waitNote(t, "the start notification", "MCP Sandbox runs again")
	for _, n := range []string{paused, again} {
		if strings.Contains(n, "HTTP") {
			t.Errorf("notification %q names an HTTP server that is not configured", n)
		}
	}
	if strings.Contains(paused, "1 sandboxes") {
		t.Errorf("notification %q", paused)
	}
}
