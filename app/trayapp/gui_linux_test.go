package trayapp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func TestGUIFirstRunConfiguresClaude(t *testing.T) {
	needGUI(t)
	waitFor(t, "the first-run notification", time.Minute, func() bool {
		for _, n := range gui.notes.all() {
			if strings.Contains(n, "Restart Claude Desktop to load it") {
				return true
			}
		}
		return false
	})
	claude := filepath.Join(gui.home, ".config", "Claude", "claude_desktop_config.json")
	var cfg struct {
		MCPServers map[string]struct {
			Command string   `json:"command"`
			Args    []string `json:"args"`
		} `json:"mcpServers"`
		GlobalShortcut *string `json:"globalShortcut"`
	}
	data, err := os.ReadFile(claude)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	e := cfg.MCPServers["mcp-sandbox"]
	if e.Command != gui.server || strings.Join(e.Args, " ") != "serve" || cfg.GlobalShortcut == nil {
		t.Errorf("Claude's config after the first run:\n%s", data)
	}
	backups, _ := filepath.Glob(claude + ".*.bak")
	if len(backups) != 1 {
		t.Fatalf("backups %v, want one", backups)
	}
	if b, _ := os.ReadFile(backups[0]); string(b) != gui.claudeBefore {
		t.Errorf("backup = %q, want the file as it was", b)
	}
	if _, err := os.Stat(filepath.Join(gui.home, ".cursor", "mcp.json")); err == nil {
		t.Error("Cursor, which is not installed, was configured")
	}
	if reg := gui.watch.registered(); len(reg) == 0 {
		t.Error("the tray item never registered with the tray host")
	}
}

// TestGUIWindowShowsRealSandbox creates a sandbox the way a client does,
// waits for the window to show it with live usage, screenshots every tab,
// and stops it with its row's Stop button.
func TestGUIWindowShowsRealSandbox(t *testing.T) {
	a := needGUI(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	s := session(t)
	id := mustCreate(t, s)
	ctx := context.Background()
	if _, err := s.Call(ctx, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo hi"}, nil); err != nil {
		t.Fatal(err)
	}

	waitFor(t, "the sandbox in the window", 30*time.Second, func() bool { _, ok := rowOf(a, id); return ok })
	selectTab(a, ui.TabSandboxes)
	waitFor(t, "live usage", 30*time.Second, func() bool { r, _ := rowOf(a, id); return !r.Sampled.IsZero() })
	r, _ := rowOf(a, id)
	if r.Client != "gui-test" || r.Language != "python" || r.Limits.MemoryMB != 512 || r.Limits.Pids != 256 || r.Network != "none" {
		t.Errorf("row = %+v", r.Info)
	}
	if r.Usage.MemoryBytes == 0 || r.Usage.Pids == 0 {
		t.Errorf("usage = %+v", r.Usage)
	}
	screenshot(t, "sandboxes")

	waitFor(t, "the HTTP server to run", 30*time.Second, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		return a.ui.http.State == "running"
	})
	selectTab(a, ui.TabStatus)
	fyne.DoAndWait(a.win.Status.TapTest)
	waitFor(t, "the Test button's round trip", 2*time.Minute, func() bool {
		return strings.Contains(onUI(a.win.Status.TestResult), `→ "hello" in `)
	})
	t.Logf("Test: %s", onUI(a.win.Status.TestResult))
	screenshot(t, "status")
	selectTab(a, ui.TabClients)
	waitFor(t, "the clients", 10*time.Second, func() bool {
		return onUI(func() int { return len(a.win.Clients.Rows()) }) > 0
	})
	screenshot(t, "clients")
	selectTab(a, ui.TabSettings)
	screenshot(t, "settings")
	selectTab(a, ui.TabActivity)
	waitFor(t, "the audit log", 10*time.Second, func() bool {
		return onUI(func() int { return len(a.win.Activity.Shown()) }) >= 2
	})
	screenshot(t, "activity")

	selectTab(a, ui.TabSandboxes)
	fyne.DoAndWait(func() { a.win.Sandboxes.TapStop(id) })
	waitFor(t, "the container to be removed", 30*time.Second, func() bool { return !exists(t, cli, id) })
	waitFor(t, "the row to go", 10*time.Second, func() bool { _, ok := rowOf(a, id); return !ok })
	fyne.DoAndWait(func() { a.win.SelectTab(ui.TabStatus) })
}

// TestGUITrayMenu reads the menu over D-Bus: the status line follows the
// engine's real sandboxes, Claude Desktop (configured on first run) has its
// check mark, and "Stop all sandboxes" really stops them.
func TestGUITrayMenu(t *testing.T) {
	needGUI(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	m := trayMenuOf(t)
	s := session(t)
	ours := []string{mustCreate(t, s), mustCreate(t, s)}
	onlyOurs(t, cli, ours...)

	engine := engineOf(needGUI(t))
	items, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		c, ok := find(items, "Claude Desktop")
		return statusLine(items) == "Docker: "+engine+" · 2 sandboxes" && ok && c.Checked
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{traymenu.LabelStop, traymenu.LabelOpen, traymenu.LabelClients, traymenu.LabelStopAll, traymenu.LabelQuit} {
		if it, ok := find(items, want); !ok || !it.Enabled {
			t.Errorf("no enabled %q in\n%s", want, outline(items, ""))
		}
	}
	if c, _ := find(items, "Cursor*"); c.Checked || c.Enabled {
		t.Errorf("Cursor is not installed, yet: %+v", c)
	}

	click(t, m, traymenu.LabelStopAll)
	waitFor(t, "both sandboxes to be removed", 30*time.Second, func() bool { return !exists(t, cli, ours[0]) && !exists(t, cli, ours[1]) })
	if _, err := m.waitMenu(10*time.Second, func(items []menuItem) bool {
		return statusLine(items) == "Docker: "+engine+" · 0 sandboxes"
	}); err != nil {
		t.Fatal(err)
	}
}

// TestGUIPause stops the service from the tray: a stdio server then
// refuses sandbox_create with a message naming the tray, and, once Start
// is clicked, creates again.
func TestGUIPause(t *testing.T) {
	a := needGUI(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	m := trayMenuOf(t)
	s := session(t)
	running := mustCreate(t, s)
	onlyOurs(t, cli, running)

	click(t, m, traymenu.LabelStop)
	if _, err := m.waitMenu(10*time.Second, func(items []menuItem) bool {
		_, ok := find(items, traymenu.LabelStart)
		return ok && strings.HasSuffix(statusLine(items), "· stopped")
	}); err != nil {
		t.Fatal(err)
	}
	if !a.st.Paused() {
		t.Fatal("the pause flag is not set")
	}
	waitFor(t, "the running sandbox to be stopped", 30*time.Second, func() bool { return !exists(t, cli, running) })
	_, err := create(t, s)
	var te *bundled.ToolError
	if !errors.As(err, &te) || !strings.Contains(te.Message, "paused from its tray") || !strings.Contains(te.Message, "Start in the tray menu") {
		t.Fatalf("sandbox_create while stopped: %v; want a refusal naming the tray", err)
	}
	waitFor(t, "the HTTP server to stop", 10*time.Second, func() bool { return a.httpPID() == 0 })

	click(t, m, traymenu.LabelStart)
	waitFor(t, "the pause flag to clear", 10*time.Second, func() bool { return !a.st.Paused() })
	id := mustCreate(t, s)
	if !exists(t, cli, id) {
		t.Errorf("sandbox %s created after Start does not exist", id)
	}
	waitFor(t, "the HTTP server to run again", 30*time.Second, func() bool { return a.httpPID() != 0 })
}

// TestGUIHTTPServer talks to the tray's own `serve --http` child with the
// URL and token the Status tab shows.
func TestGUIHTTPServer(t *testing.T) {
	a := needGUI(t)
	var info ui.HTTPInfo
	waitFor(t, "the HTTP server", 30*time.Second, func() bool {
		a.mu.Lock()
		defer a.mu.Unlock()
		info = a.ui.http
		return info.State == "running"
	})
	if info.URL != fmt.Sprintf("http://127.0.0.1:%d/mcp", gui.port) || len(info.Token) < 32 {
		t.Fatalf("HTTP info %+v", info)
	}
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"gui-test","version":"1"}}}`
	post := func(token string) (int, string) {
		var resp *http.Response
		var err error
		for i := 0; i < 50; i++ { // the child may still be binding its port
			req, _ := http.NewRequest("POST", info.URL, strings.NewReader(body))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			req.Header.Set("Authorization", "Bearer "+token)
			if resp, err = http.DefaultClient.Do(req); err == nil {
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, b := post(info.Token); code != http.StatusOK || !strings.Contains(b, "mcp-sandbox") {
		t.Errorf("initialize with the token: %d %s", code, b)
	}
	if code, _ := post("wrong-token-wrong-token-wrong-token"); code != http.StatusUnauthorized {
		t.Errorf("initialize with a wrong token: %d, want 401", code)
	}
}

// TestGUISettingsSave saves a value from the Settings tab into the shared
// file, keeping the comment the test's config has, with a backup.
func TestGUISettingsSave(t *testing.T) {
	a := needGUI(t)
	fyne.DoAndWait(func() {
		a.win.Settings.Reload()
		a.win.Settings.Set("limits.max_sandboxes", func(c *config.Config) { c.Limits.MaxSandboxes = 7 })
	})
	// Save runs its action on a goroutine; wait for its message.
	fyne.DoAndWait(func() { a.win.Settings.Save() })
	waitFor(t, "the save", 10*time.Second, func() bool {
		return strings.HasPrefix(onUI(func() string { return a.win.Settings.Message() }), "Saved to")
	})
	data, _ := os.ReadFile(config.Path())
	if !strings.Contains(string(data), "max_sandboxes = 7") || !strings.Contains(string(data), "# the tray's own HTTP server") {
		t.Errorf("config after save:\n%s", data)
	}
	if b, _ := filepath.Glob(config.Path() + ".*.bak"); len(b) == 0 {
		t.Error("no backup of the config")
	}
	waitFor(t, "the watcher to load it", 10*time.Second, func() bool { return a.cfg.Current().Limits.MaxSandboxes == 7 })
}

// TestGUISecondLaunch starts "a second tray" against the same state
// directory: it must not run, and the first one must show its window.
func TestGUISecondLaunch(t *testing.T) {
	a := needGUI(t)
	fyne.DoAndWait(func() { a.win.Hide() })
	if _, err := instance.Acquire(a.st.Dir()); !errors.Is(err, instance.ErrRunning) {
		t.Fatalf("second Acquire = %v, want ErrRunning", err)
	}
	waitFor(t, "the window to come forward", 10*time.Second, func() bool { return onUI(a.win.Visible) })
}
