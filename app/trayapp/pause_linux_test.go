package trayapp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
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

// Pause from the menu is confirmed in the menu (the Pause submenu's one
// action names what it stops) and opens no window: the sandbox goes, the
// notification counts it by the one rule, the menu offers Start instead,
// and Start brings the service back.
func TestPauseFromMenu(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	server := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), "mcp-sandbox")
	env := func(k string) string {
		if k == "HOME" {
			return p.home
		}
		return os.Getenv(k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, Getenv: env, ClientName: "pause-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := mustCreate(t, s)
	t.Cleanup(func() { s.Call(context.Background(), "sandbox_stop", map[string]any{"sandbox_id": id}, nil) })
	const confirm = "Stop 1 sandbox and pause"
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		_, ok := find(items, confirm)
		return ok
	}); err != nil {
		t.Fatalf("the Pause submenu never offered %q: %v", confirm, err)
	}
	click(t, m, confirm)
	note := d.waitNote(t, "the pause notification", "MCP Sandbox is Paused: 1 sandbox stopped")
	if strings.Contains(note, "HTTP") {
		t.Errorf("notification %q names an HTTP server that is not configured", note)
	}
	if kids := windowChildren(t, p.pid); len(kids) != 0 {
		t.Errorf("Pause from the menu opened window processes %v", kids)
	}
	waitFor(t, "the sandbox to be removed", 30*time.Second, func() bool { return !exists(t, cli, id) })
	items, err := m.waitMenu(10*time.Second, func(items []menuItem) bool {
		start, ok := find(items, traymenu.LabelStart)
		pause, _ := find(items, traymenu.LabelPause)
		return ok && start.Visible && !pause.Visible
	})
	if err != nil {
		t.Fatalf("paused, the menu does not offer Start alone: %v", err)
	}
	if !strings.Contains(statusLine(items), traymenu.PausedWord) {
		t.Errorf("status line %q does not say %s", statusLine(items), traymenu.PausedWord)
	}
	click(t, m, traymenu.LabelStart)
	d.waitNote(t, "the start notification", "MCP Sandbox runs again")
	p.stop(t)
}
