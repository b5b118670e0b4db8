package trayapp

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// The tests in this file run the real mcp-sandbox-tray binary as a
// separate process, with an environment of their own (no session bus, a
// bus without a tray host, …), as a person's desktop would start it.

// trayProc is a tray binary running in its own home, on an X server of
// its own, so its window is told apart from the in-process tray's.
type trayProc struct {
	cmd     *exec.Cmd
	pid     int
	home    string
	display string
	stderr  *bytes.Buffer
	done    chan error
}

// startTray runs the tray binary (built from this tree, beside a freshly
// built mcp-sandbox) on a private Xvfb, with HOME set to a new home holding
// the test config, and busAddr as its session bus. The X server picks its
// own display number (apptest.NewXvfb): xvfb-run -a checks lock files and
// then starts, which races with the other Xvfb the package's tests run.
func startTray(t *testing.T, busAddr string, args ...string) *trayProc {
	return startTrayEnv(t, busAddr, nil, args...)
}

// startTrayEnv is startTray with more environment variables.
func startTrayEnv(t *testing.T, busAddr string, env []string, args ...string) *trayProc {
	t.Helper()
	if _, err := exec.LookPath("Xvfb"); err != nil {
		apptest.Missing(t, "Xvfb (apt-get install xvfb)")
	}
	bin := apptest.Binary(t, "mcp-sandbox-tray")
	apptest.Binary(t, "mcp-sandbox")        // the bundled server, in the same directory
	apptest.Binary(t, "mcp-sandbox-window") // the window, in the same directory
	home := t.TempDir()
	if err := apptest.WriteHome(home, ""); err != nil {
		t.Fatal(err)
	}
	display, stopX, err := apptest.NewXvfb()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stopX)
	cmd := exec.Command(bin, args...)
	cmd.Env = []string{"HOME=" + home, "PATH=" + os.Getenv("PATH"), "DISPLAY=" + display,
		"DBUS_SESSION_BUS_ADDRESS=" + busAddr, "LANG=C.UTF-8"}
	cmd.Env = append(cmd.Env, env...)
	p := &trayProc{cmd: cmd, home: home, display: display, stderr: &bytes.Buffer{}, done: make(chan error, 1)}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	p.pid = cmd.Process.Pid
	go func() { p.done <- cmd.Wait() }()
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// log returns the tray's log file so far.
func (p *trayProc) log() string {
	b, _ := os.ReadFile(filepath.Join(p.home, ".local", "state", "mcp-sandbox", "logs", "tray.log"))
	return string(b)
}

// stop sends SIGTERM (what a session manager sends at logout) and checks
// the tray exits cleanly.
func (p *trayProc) stop(t *testing.T) {
	t.Helper()
	syscall.Kill(p.pid, syscall.SIGTERM)
	select {
	case err := <-p.done:
		if err != nil || strings.Contains(p.stderr.String(), "panic") {
			t.Errorf("the tray exited with %v; stderr:\n%s", err, p.stderr)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("the tray did not exit within 30s of SIGTERM; stderr:\n%s", p.stderr)
	}
}

// windowShown waits for an X window titled "MCP Sandbox" and screenshots
// it to name.png in the screenshot directory. It looks with xwininfo,
// which only queries: ImageMagick's import, asked for a title no window
// has yet, waits for a click with the pointer grabbed, and a window
// process starting meanwhile could not open the display.
func windowShown(t *testing.T, p *trayProc, name string) {
	t.Helper()
	if _, err := exec.LookPath("xwininfo"); err != nil {
		apptest.Missing(t, "xwininfo (apt-get install x11-utils)")
	}
	env := []string{"DISPLAY=" + p.display, "PATH=" + os.Getenv("PATH"), "HOME=" + p.home}
	var out []byte
	var err error
	found := false
	for i := 0; i < 300 && !found; i++ {
		q := exec.Command("xwininfo", "-name", ui.Title)
		q.Env = env
		out, err = q.CombinedOutput()
		if found = err == nil; !found {
			time.Sleep(200 * time.Millisecond)
		}
	}
	if !found {
		t.Fatalf("no window titled %q appeared: %v %s\ntray log:\n%s\nstderr:\n%s", ui.Title, err, out, p.log(), p.stderr)
	}
	time.Sleep(700 * time.Millisecond) // a few frames after it is mapped
	shot := filepath.Join(screenshotDir(t), name+".png")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	imp := exec.CommandContext(ctx, "import", "-window", ui.Title, shot)
	imp.Env = env
	if out, err := imp.CombinedOutput(); err != nil {
		t.Fatalf("import -window %q: %v %s", ui.Title, err, out)
	}
	t.Logf("screenshot: %s", shot)
}

// TestNoSessionBus starts the tray where no D-Bus session bus exists: it
// must not enable the tray (Fyne's tray panics on Quit without one), show
// its window instead, and quit cleanly.
func TestNoSessionBus(t *testing.T) {
	skipUnderRace(t)
	p := startTray(t, "unix:path="+filepath.Join(t.TempDir(), "no-bus-here"), "--hidden")
	windowShown(t, p, "no-session-bus")
	if !strings.Contains(p.log(), "no D-Bus session bus") {
		t.Errorf("the log does not say why there is no tray:\n%s", p.log())
	}
	p.stop(t)
}

// TestNoTrayHost starts the tray on a bus where nothing shows tray icons:
// even with --hidden the window opens, since there is no other way in.
func TestNoTrayHost(t *testing.T) {
	skipUnderRace(t)
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		apptest.Missing(t, "dbus-daemon")
	}
	bus, err := startBus()
	if err != nil {
		t.Fatal(err)
	}
	defer bus.stop()
	p := startTray(t, bus.addr, "--hidden")
	windowShown(t, p, "no-tray-host")
	if !strings.Contains(p.log(), "no tray host") {
		t.Errorf("the log does not say there is no tray host:\n%s", p.log())
	}
	p.stop(t)
}

// cpuTicks is the process's user+system CPU time in clock ticks.
func cpuTicks(t *testing.T, pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return utime + stime
}

// rssMB is the process's resident set size.
func rssMB(t *testing.T, pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
			return kb / 1024
		}
	}
	return 0
}

// measure returns the CPU use (percent of one core) over d, and the RSS
// at its end.
func measure(t *testing.T, pid int, d time.Duration) (cpu, rss float64) {
	const hz = 100 // USER_HZ on Linux
	t0, c0 := time.Now(), cpuTicks(t, pid)
	time.Sleep(d)
	c1, el := cpuTicks(t, pid), time.Since(t0)
	return float64(c1-c0) / hz / el.Seconds() * 100, rssMB(t, pid)
}

func runtimeCPUs() int { return runtime.NumCPU() }
