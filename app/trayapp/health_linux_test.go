package trayapp

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// A configured image that is missing (and cannot be pulled): the real
// window's Status headline says code in that language cannot run (not
// Running) and its log names the problem the card shows, and `doctor`
// exits non-zero for the same config. Screenshot at 800×560.
func TestMissingImageCard(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage, apptest.NodeImage)
	defer cli.Close()
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	const absent = "mcp-sandbox-test/absent:never"
	cfg := strings.Replace(apptest.ConfigTOML(), `python = "`+apptest.PythonImage+`"`, `python = "`+absent+`"`, 1)
	if err := os.WriteFile(filepath.Join(p.home, ".config", "mcp-sandbox", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray"))
	win := exec.Command(filepath.Join(dir, WindowBinary), "--tab", ui.TabStatus, "--size", "800x560")
	win.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + p.display,
		"DBUS_SESSION_BUS_ADDRESS=" + d.bus.addr, "LANG=C.UTF-8"}
	var stderr bytes.Buffer
	win.Stderr = &stderr
	if err := win.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		win.Process.Signal(syscall.SIGTERM)
		win.Wait()
	}()
	waitFor(t, "the headline to say python cannot run", 60*time.Second, func() bool {
		return strings.HasPrefix(p.windowHeadline(), "Needs attention: code in python cannot run")
	})
	logText, _ := os.ReadFile(filepath.Join(p.home, ".local", "state", "mcp-sandbox", "logs", "window.log"))
	if !strings.Contains(string(logText), "image "+absent+" (python) is not present") {
		t.Errorf("the window's log does not name the missing image:\n%s", logText)
	}
	windowShown(t, &trayProc{pid: win.Process.Pid, home: p.home, display: p.display, stderr: &stderr}, "window-missing-image-800x560")

	doctor := exec.Command(filepath.Join(dir, "mcp-sandbox"), "doctor", "--json")
	doctor.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH")}
	out, err := doctor.Output()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() == 0 {
		t.Errorf("doctor exited %v for a missing image, want non-zero:\n%s", err, out)
	}
	if !strings.Contains(string(out), `"ok": false`) || !strings.Contains(string(out), absent) {
		t.Errorf("doctor --json does not report the missing image:\n%s", out)
	}
}

// While a configured language cannot run (bash on an image without
// bash), the tray says so where the window's headline does: the title
// and an attention item in the menu; once the config picks an image with
// bash, both go, without a restart.
func TestTrayNeedsAttention(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage, apptest.TinyImage)
	defer cli.Close()
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	cfgPath := filepath.Join(p.home, ".config", "mcp-sandbox", "config.toml")
	write := func(bash string) {
		cfg := strings.Replace(apptest.ConfigTOML(), `bash = "`+apptest.PythonImage+`"`, `bash = "`+bash+`"`, 1)
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	title := func() string {
		v, _ := m.itemProp("Title")
		s, _ := v.(string)
		return s
	}
	write(apptest.TinyImage)
	const want = "Needs attention: code in bash cannot run"
	waitFor(t, "the title to say bash cannot run", 60*time.Second, func() bool {
		return title() == "MCP Sandbox — "+want
	})
	if _, err := m.waitMenu(10*time.Second, func(items []menuItem) bool {
		_, ok := find(items, traymenu.AttentionLabel(traymenu.State{Attention: "code in bash cannot run"}))
		return ok
	}); err != nil {
		t.Errorf("the menu has no attention item: %v", err)
	}
	write(apptest.PythonImage)
	waitFor(t, "the title to count sandboxes again", 60*time.Second, func() bool {
		return strings.HasPrefix(title(), "MCP Sandbox — ") && !strings.Contains(title(), "attention")
	})
}
