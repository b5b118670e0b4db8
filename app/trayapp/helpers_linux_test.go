package trayapp

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// noBus is the environment entry of a session bus that is not there, for
// a window started outside a test desktop: with no address at all, D-Bus
// clients launch a session bus of their own that outlives the test.
func noBus(t *testing.T) string {
	return "DBUS_SESSION_BUS_ADDRESS=unix:path=" + filepath.Join(t.TempDir(), "no-bus")
}

// desktop is what a Linux desktop gives the tray: a session bus of the
// test's own with a tray host (the StatusNotifierWatcher) and a
// notification server, which keeps every notification.
type desktop struct {
	bus   *privateBus
	notes *notifier
}

func startDesktop(t *testing.T) *desktop {
	t.Helper()
	bus, err := startBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bus.stop)
	if _, err := startWatcher(bus.addr); err != nil {
		t.Fatal(err)
	}
	notes, err := startNotifier(bus.addr)
	if err != nil {
		t.Fatal(err)
	}
	return &desktop{bus: bus, notes: notes}
}

// startTray starts the tray binary on the desktop, with env added to its
// environment, and waits for its menu.
func (d *desktop) startTray(t *testing.T, env []string, args ...string) (*trayProc, *trayMenu) {
	t.Helper()
	p := startTrayEnv(t, d.bus.addr, env, args...)
	var m *trayMenu
	var err error
	waitFor(t, "the tray's menu", 30*time.Second, func() bool {
		m, err = openTrayMenu(d.bus.addr, p.pid)
		return err == nil
	})
	return p, m
}

// waitNote waits for a notification that contains every one of want, and
// returns it.
func (d *desktop) waitNote(t *testing.T, what string, want ...string) string {
	t.Helper()
	var got string
	waitFor(t, what, 30*time.Second, func() bool {
		for _, s := range d.notes.all() {
			ok := true
			for _, w := range want {
				ok = ok && strings.Contains(s, w)
			}
			if ok {
				got = s
				return true
			}
		}
		return false
	})
	return got
}

func create(t *testing.T, s *bundled.Session) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var out struct {
		ID string `json:"sandbox_id"`
	}
	_, err := s.Call(ctx, "sandbox_create", map[string]any{"language": "python"}, &out)
	return out.ID, err
}

func mustCreate(t *testing.T, s *bundled.Session) string {
	t.Helper()
	id, err := create(t, s)
	if err != nil {
		t.Fatalf("sandbox_create: %v", err)
	}
	return id
}

func exists(t *testing.T, cli *client.Client, id string) bool {
	_, err := cli.ContainerInspect(context.Background(), "mcp-sandbox-"+id)
	if cerrdefs.IsNotFound(err) {
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func click(t *testing.T, m *trayMenu, label string) {
	t.Helper()
	items, err := m.waitMenu(10*time.Second, func(items []menuItem) bool { _, ok := find(items, label); return ok })
	if err != nil {
		t.Fatal(err)
	}
	it, _ := find(items, label)
	if err := m.click(it.ID); err != nil {
		t.Fatalf("click %q: %v", label, err)
	}
}

// screenshotDir is where the window's screenshots go: $MCP_SANDBOX_SCREENSHOT_DIR
// (CI keeps it as an artifact), else a temporary directory.
func screenshotDir(t *testing.T) string {
	if d := os.Getenv("MCP_SANDBOX_SCREENSHOT_DIR"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	d := filepath.Join(os.TempDir(), "mcp-sandbox-screenshots")
	os.MkdirAll(d, 0o755)
	return d
}

// screenshot saves what the X server shows for the window titled "MCP
// Sandbox" to NAME.png: ImageMagick's import finds the window by that
// title, the contract outside tests rely on.
func screenshot(t *testing.T, name string) {
	t.Helper()
	time.Sleep(700 * time.Millisecond) // a few frames after the last change
	p := filepath.Join(screenshotDir(t), name+".png")
	if out, err := exec.Command("import", "-window", ui.Title, p).CombinedOutput(); err != nil {
		t.Fatalf("import -window %q: %v\n%s", ui.Title, err, out)
	}
	t.Logf("screenshot: %s", p)
}

// statusLine is the menu's first line, "Docker: X · N sandboxes".
func statusLine(items []menuItem) string {
	if len(items) == 0 {
		return ""
	}
	return items[0].Label
}

// tail is the last n bytes of s, marked as cut when it is.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "[…]" + s[len(s)-n:]
}
