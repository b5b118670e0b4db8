package trayapp

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// tabX is where each tab's label sits in the window's tab bar, in window
// coordinates (the bar is 42 px tall, its labels centred at y = 21), for
// clicks with xdotool. Every click is checked against the tab the window
// then logs (windowTab), so a layout change fails loudly, not silently.
var tabX = map[string]int{
	ui.TabStatus: 45, ui.TabSandboxes: 150, ui.TabClients: 255, ui.TabSettings: 352, ui.TabActivity: 450,
}

// needXdotool skips the test, or fails it under CI=true, without xdotool.
func needXdotool(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("xdotool"); err != nil {
		apptest.Missing(t, "xdotool (apt-get install xdotool)")
	}
}

// windowLog is the window's log file so far.
func (p *trayProc) windowLog() string {
	b, _ := os.ReadFile(filepath.Join(p.home, ".local", "state", "mcp-sandbox", "logs", "window.log"))
	return string(b)
}

var viewLine = regexp.MustCompile(`msg=view tab=(\w+) visible=(\w+)`)

// windowTab is the tab the window last logged as in view, or "".
func (p *trayProc) windowTab() string {
	all := viewLine.FindAllStringSubmatch(p.windowLog(), -1)
	if len(all) == 0 || all[len(all)-1][2] != "true" {
		return ""
	}
	return all[len(all)-1][1]
}

// xenv is the environment for X tools on the tray's display.
func (p *trayProc) xenv() []string {
	return []string{"DISPLAY=" + p.display, "PATH=" + os.Getenv("PATH"), "HOME=" + p.home}
}

// xdo runs xdotool on the tray's display and returns its output.
func (p *trayProc) xdo(args ...string) (string, error) {
	c := exec.Command("xdotool", args...)
	c.Env = p.xenv()
	out, err := c.CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("xdotool %s: %v: %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out)), nil
}

// windowID is the X window id of the window titled "MCP Sandbox".
func (p *trayProc) windowID() (string, error) {
	out, err := p.xdo("search", "--name", "^"+ui.Title+"$")
	if err != nil {
		return "", err
	}
	return strings.Fields(out + " ")[0], nil
}

// clickAt clicks at (x, y) in the window's coordinates.
func (p *trayProc) clickAt(x, y int) error {
	id, err := p.windowID()
	if err != nil {
		return err
	}
	_, err = p.xdo("mousemove", "--window", id, strconv.Itoa(x), strconv.Itoa(y), "click", "1")
	return err
}

// selectTab clicks a tab's label and waits until the window logs it in
// view.
func (p *trayProc) selectTab(t *testing.T, tab string) {
	t.Helper()
	if err := p.clickAt(tabX[tab], 21); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the window to show the "+tab+" tab", 15*time.Second, func() bool { return p.windowTab() == tab })
}

// geometry is the window's size on the X server, as xwininfo reports it.
func (p *trayProc) geometry(t *testing.T) (w, h int) {
	t.Helper()
	q := exec.Command("xwininfo", "-name", ui.Title)
	q.Env = p.xenv()
	out, err := q.CombinedOutput()
	if err != nil {
		t.Fatalf("xwininfo: %v %s", err, out)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Width:"); ok {
			w, _ = strconv.Atoi(strings.TrimSpace(v))
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Height:"); ok {
			h, _ = strconv.Atoi(strings.TrimSpace(v))
		}
	}
	return w, h
}

// startWindow runs the window binary beside the tray's, on the tray's
// display and bus and in its home, with env on top and args as its
// command line, as the tray would; it is ended at the test's end.
func startWindow(t *testing.T, d *desktop, p *trayProc, env []string, args ...string) *trayProc {
	t.Helper()
	win := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), WindowBinary)
	cmd := exec.Command(win, args...)
	cmd.Env = append([]string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + p.display,
		"DBUS_SESSION_BUS_ADDRESS=" + d.bus.addr, "LANG=C.UTF-8"}, env...)
	wp := &trayProc{cmd: cmd, home: p.home, display: p.display, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = wp.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wp.pid = cmd.Process.Pid
	go func() { wp.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-wp.done
		}
	})
	return wp
}

// alive reports whether pid runs (exists and is not a zombie).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	return len(f) > 0 && f[0] != "Z" && f[0] != "X"
}

// endWindow sends SIGTERM (what the close button amounts to) and checks
// the window exits cleanly.
func (p *trayProc) endWindow(t *testing.T) {
	t.Helper()
	syscall.Kill(p.pid, syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil {
			t.Errorf("the window exited with %v:\n%s", err, p.stderr)
		}
	case <-time.After(20 * time.Second):
		// Where it is stuck: a Go program prints its goroutines on SIGQUIT.
		syscall.Kill(p.pid, syscall.SIGQUIT)
		select {
		case <-p.done:
			t.Errorf("the window did not end within 20 s of SIGTERM; its goroutines on SIGQUIT:\n%s", p.stderr)
		case <-time.After(10 * time.Second):
			t.Errorf("the window did not end within 20 s of SIGTERM, nor on SIGQUIT")
		}
	}
}
