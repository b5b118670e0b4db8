package trayapp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// openWindow clicks Open in the tray's menu, waits for the window (a
// screenshot named shot) and returns its process, the tray's only window
// child.
func openWindow(t *testing.T, p *trayProc, m *trayMenu, shot string) int {
	t.Helper()
	click(t, m, traymenu.LabelOpen)
	windowShown(t, p, shot)
	kids := windowChildren(t, p.pid)
	if len(kids) != 1 {
		t.Fatalf("%s: window processes %v after Open, want one", shot, kids)
	}
	return kids[0]
}

// windowChildren lists the window processes the tray pid started.
func windowChildren(t *testing.T, pid int) []int {
	t.Helper()
	ents, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	var out []int
	for _, e := range ents {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(b)
		i := strings.LastIndexByte(s, ')')
		if i < 0 || !strings.Contains(s[:i], "(mcp-sandbox-win") {
			continue
		}
		f := strings.Fields(s[i+1:])
		if len(f) > 1 && f[0] != "Z" && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// The tray opens the window as a process of its own and that process ends
// when the window closes: twice, and nothing is left. Then every tab is
// screenshot at the default size and at 800×560, from the window binary
// as the tray starts it, and a sandbox claimed from the warm pool shows in
// the tray's count and in `mcp-sandbox ps`.
func TestWindowProcess(t *testing.T) {
	skipUnderRace(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	if got := windowChildren(t, p.pid); len(got) != 0 {
		t.Fatalf("window processes %v at a hidden start, want none", got)
	}
	for round := 1; round <= 2; round++ {
		wpid := openWindow(t, p, m, fmt.Sprintf("window-open-%d", round))
		syscall.Kill(wpid, syscall.SIGTERM) // what the close button does: the window quits
		waitFor(t, "the window process to end", 20*time.Second, func() bool { return len(windowChildren(t, p.pid)) == 0 })
	}

	// Every tab, at both sizes.
	win := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), WindowBinary)
	for _, size := range []string{"1120x700", "800x560"} {
		for _, tab := range []string{ui.TabStatus, ui.TabSandboxes, ui.TabClients, ui.TabSettings, ui.TabActivity} {
			cmd := exec.Command(win, "--tab", tab, "--size", size)
			cmd.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + p.display,
				"DBUS_SESSION_BUS_ADDRESS=" + d.bus.addr, "LANG=C.UTF-8"}
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			wp := &trayProc{cmd: cmd, pid: cmd.Process.Pid, home: p.home, display: p.display, stderr: &stderr}
			time.Sleep(5 * time.Second) // the tab's content loads (Docker, clients, the audit log)
			windowShown(t, wp, "tab-"+strings.ToLower(tab)+"-"+size)
			cmd.Process.Signal(syscall.SIGTERM)
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil {
					t.Errorf("window --tab %s --size %s exited with %v:\n%s", tab, size, err, stderr.String())
				}
			case <-time.After(20 * time.Second):
				// Go's SIGQUIT handler writes every goroutine's stack to
				// stderr: what the window was stuck on.
				cmd.Process.Signal(syscall.SIGQUIT)
				select {
				case <-done:
				case <-time.After(3 * time.Second):
					cmd.Process.Kill()
					<-done
				}
				t.Errorf("window --tab %s did not end within 20 s of SIGTERM; its stderr (goroutines after SIGQUIT):\n%s", tab, tail(stderr.String(), 64<<10))
			}
		}
	}

	// A sandbox claimed from the warm pool.
	cfg := filepath.Join(p.home, ".config", "mcp-sandbox", "config.toml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(apptest.ConfigTOML(), "size = 0", "size = 1\nlanguages = [\"python\"]", 1)), 0o600); err != nil {
		t.Fatal(err)
	}
	server := filepath.Join(filepath.Dir(win), "mcp-sandbox")
	env := func(k string) string {
		if k == "HOME" {
			return p.home
		}
		return os.Getenv(k)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, Getenv: env, ClientName: "window-test"})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	// Let the pool fill before asking, so the sandbox is a claimed one.
	waitFor(t, "a warm pool sandbox", 2*time.Minute, func() bool {
		out, _ := exec.Command("docker", "ps", "--filter", "label=io.mcp-sandbox.pool=true", "--filter", "name=mcp-sandbox-pool-", "-q").Output()
		return len(bytes.TrimSpace(out)) > 0
	})
	var created struct {
		ID string `json:"sandbox_id"`
	}
	if _, err := s.Call(ctx, "sandbox_create", map[string]any{"language": "python"}, &created); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Call(context.Background(), "sandbox_stop", map[string]any{"sandbox_id": created.ID}, nil) })
	if created.ID == "" {
		t.Fatal("sandbox_create returned no sandbox_id")
	}
	ps := exec.Command(server, "ps")
	ps.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH")}
	out, err := ps.CombinedOutput()
	if err != nil || !strings.Contains(string(out), created.ID) {
		t.Errorf("mcp-sandbox ps (%v) does not list the pool-claimed sandbox %s:\n%s", err, created.ID, out)
	}
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		line := statusLine(items)
		return strings.Contains(line, "sandbox") && !strings.Contains(line, "· 0 sandboxes")
	}); err != nil {
		t.Errorf("the tray's count never included the pool-claimed sandbox: %v", err)
	}
	cmd := exec.Command(win, "--tab", ui.TabSandboxes)
	cmd.Env = []string{"HOME=" + p.home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + p.display,
		"DBUS_SESSION_BUS_ADDRESS=" + d.bus.addr, "LANG=C.UTF-8"}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(6 * time.Second) // Docker found, the list and the first usage sample in
	windowShown(t, &trayProc{pid: cmd.Process.Pid, home: p.home, display: p.display, stderr: &bytes.Buffer{}}, "sandboxes-pool-claimed")
	cmd.Process.Signal(syscall.SIGTERM)
	cmd.Wait()
	p.stop(t)
	if got := windowChildren(t, p.pid); len(got) != 0 {
		t.Errorf("window processes %v left after the tray quit", got)
	}
}

// A window process that crashes (a Go fatal error: SIGQUIT makes the
// runtime dump its goroutines and exit 2) is reported by a notification
// and in the tray's log, and the menu's Open starts a new window at once.
func TestWindowCrashIsReported(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	click(t, m, traymenu.LabelOpen)
	var kids []int
	waitFor(t, "the window process", 30*time.Second, func() bool {
		kids = windowChildren(t, p.pid)
		return len(kids) == 1
	})
	time.Sleep(2 * time.Second) // past the window's start-up, so the crash is the window's, not its start's
	syscall.Kill(kids[0], syscall.SIGQUIT)
	note := d.waitNote(t, "the crash notification", "window closed unexpectedly", traymenu.LabelOpen)
	if !strings.Contains(note, "exit status 2") {
		t.Errorf("notification %q does not say how the window ended", note)
	}
	click(t, m, traymenu.LabelOpen)
	waitFor(t, "a new window process", 30*time.Second, func() bool {
		k := windowChildren(t, p.pid)
		return len(k) == 1 && k[0] != kids[0]
	})
	// The tray ends its window before it exits: a window left running
	// would still write into the home the test removes.
	p.stop(t)
}
