package trayapp

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// The idle targets (issue 34), printed beside the figures, never failed on:
// a shared CI machine's timings are not the program's.
const (
	trayCPUTarget   = 0.05 // % of one core, window closed, 3 live sandboxes
	trayRSSTarget   = 20.0 // MB
	windowCPUTarget = 1.0  // % of one core, Status tab
	windowRSSTarget = 150.0
)

// useSeconds is how long TestIdleCost uses the window before measuring it
// again: MCP_SANDBOX_WINDOW_USE_SECONDS, else 600 (ten minutes of use;
// .ci/bench shortens it).
func useSeconds(t *testing.T) int {
	v := os.Getenv("MCP_SANDBOX_WINDOW_USE_SECONDS")
	if v == "" {
		return 600
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("MCP_SANDBOX_WINDOW_USE_SECONDS=%q: want a number of seconds", v)
	}
	return n
}

// TestIdleCost is the tray's and the window's benchmark (not a timed test:
// it prints its figures beside the targets and fails only on a regression
// far beyond them, or on a window whose memory climbs): the tray process
// with three live sandboxes and no window, over MCP_SANDBOX_IDLE_SECONDS
// (it runs only when that is set; .ci/bench and the figures of
// docs/performance.md use 60); then the window process the tray
// opens, fresh on its Status tab, over half that, beside a bare Fyne
// window (testdata/barefyne, its baseline) over the same spell; then the
// same window back on Status after MCP_SANDBOX_WINDOW_USE_SECONDS of its
// tabs clicked in turn (600 unless set). Each RSS is split by what maps it (smaps):
// the executable's own pages, the GL stack (Mesa's software renderer and
// LLVM under Xvfb) and anonymous memory (heaps).
func TestIdleCost(t *testing.T) {
	skipUnderRace(t)
	secs, err := strconv.Atoi(os.Getenv("MCP_SANDBOX_IDLE_SECONDS"))
	if err != nil || secs <= 0 {
		t.Skip("a benchmark of a few minutes: set MCP_SANDBOX_IDLE_SECONDS (60, as .ci/bench and the figures of docs/performance.md) and MCP_SANDBOX_WINDOW_USE_SECONDS (600 unless set)")
	}
	use := useSeconds(t)
	p, m := startDesktop(t).startTray(t, nil, "--hidden")
	threeSandboxes(t, p, m)
	// The targets are for the tray at rest: after its idle release, which
	// comes idleRelease after the last change (the third sandbox).
	time.Sleep(idleRelease + 5*time.Second)
	tray := measureIdle(t, p.pid, time.Duration(secs)*time.Second)

	wpid := openWindow(t, p, m, "idle-window")
	bpid, stopBare := startBareFyne(t, p)
	time.Sleep(10 * time.Second) // start-up done, its garbage released
	// Focused, the window runs at Fyne's rate, as the bare window does
	// whatever its focus; in the background (the person in another
	// program: here the bare window has the focus) it pauses Fyne's loop.
	focusWindow(t, p, wpid)
	focused, bare := measureIdlePair(t, wpid, bpid, time.Duration(secs/2)*time.Second)
	focusWindow(t, p, bpid)
	fresh := measureIdle(t, wpid, time.Duration(secs/2)*time.Second)

	var used idleFigures
	var v soakView
	if use > 0 {
		focusWindow(t, p, wpid) // the person comes to the window
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(use)*time.Second)
		v = watchWindow(t, ctx, p, wpid)
		cancel()
		if v.died != "" {
			t.Fatalf("%s\ntray log:\n%s", v.died, p.log())
		}
		p.selectTab(t, ui.TabStatus)
		focusWindow(t, p, bpid) // and leaves it
		time.Sleep(10 * time.Second)
		used = measureIdle(t, wpid, time.Duration(secs/2)*time.Second)
	}
	stopBare()
	report := idleReport(secs, use, tray, fresh, focused, bare, used, v)
	t.Log("\n" + report)
	if err := os.WriteFile(filepath.Join(screenshotDir(t), "idle-cost.txt"), []byte(report), 0o644); err != nil {
		t.Error(err)
	}
	// Regression bounds only, far above the targets (a shared CI machine).
	if tray.cpu >= 2 || tray.mem.total >= 100 {
		t.Errorf("idle tray: CPU %.2f %%, RSS %.1f MB; regression bound is 2 %% and 100 MB", tray.cpu, tray.mem.total)
	}
	// A climb is a leak whatever the machine: only a run long enough to
	// tell one from warm-up is judged (flatMemory, as the soak's).
	if use >= 120 {
		if why := flatMemory(v.rss); why != "" {
			t.Errorf("the window's memory is not flat while it is used: %s", why)
		}
	}
	p.stop(t)
}

// threeSandboxes makes three sandboxes by a client in the tray's home and
// waits for the tray to count them.
func threeSandboxes(t *testing.T, p *trayProc, m *trayMenu) {
	t.Helper()
	cli := apptest.Docker(t, apptest.PythonImage)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	server := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), "mcp-sandbox")
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, Getenv: func(k string) string {
		if k == "HOME" {
			return p.home
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	// The client stays connected to the end: its server removes its
	// sandboxes when it quits.
	t.Cleanup(func() { s.Close() })
	var created struct {
		ID string `json:"sandbox_id"`
	}
	for i := 0; i < 3; i++ {
		if _, err := s.Call(ctx, "sandbox_create", map[string]any{"language": "python"}, &created); err != nil {
			t.Fatal(err)
		}
	}
	// The tray counts its installation's sandboxes, not other tests'.
	waitFor(t, "the tray to count the sandboxes", 30*time.Second, func() bool {
		ids, _ := apptest.InstallationSandboxes(ctx, cli, created.ID)
		items, err := m.layout()
		return err == nil && len(ids) >= 3 && strings.HasSuffix(statusLine(items), fmt.Sprintf("· %d sandboxes", len(ids)))
	})
	if kids := windowChildren(t, p.pid); len(kids) != 0 {
		t.Fatalf("window processes %v while idle, want none", kids)
	}
}

// idleFigures is one process measured over a quiet spell.
type idleFigures struct {
	secs    float64
	cpu     float64 // % of one core
	wakeups float64 // context switches of all its threads, a second
	mem     memSplit
}

// measureIdle measures pid over d: its CPU use, its threads' wakeups, and
// its resident set at the end, split by what maps it.
func measureIdle(t *testing.T, pid int, d time.Duration) idleFigures {
	w0 := wakeups(pid)
	t0 := time.Now()
	cpu, _ := measure(t, pid, d)
	el := time.Since(t0).Seconds()
	return idleFigures{secs: el, cpu: cpu, wakeups: float64(wakeups(pid)-w0) / el, mem: splitRSS(t, pid)}
}

// measureIdlePair is measureIdle of two processes over the same spell, so
// that the machine's state weighs on both alike.
func measureIdlePair(t *testing.T, a, b int, d time.Duration) (fa, fb idleFigures) {
	const hz = 100 // USER_HZ on Linux
	wa, wb, ca, cb := wakeups(a), wakeups(b), cpuTicks(t, a), cpuTicks(t, b)
	t0 := time.Now()
	time.Sleep(d)
	ca1, cb1 := cpuTicks(t, a), cpuTicks(t, b)
	el := time.Since(t0).Seconds()
	fig := func(pid int, c0, c1, w0 int64) idleFigures {
		return idleFigures{secs: el, cpu: float64(c1-c0) / hz / el * 100, wakeups: float64(wakeups(pid)-w0) / el, mem: splitRSS(t, pid)}
	}
	return fig(a, ca, ca1, wa), fig(b, cb, cb1, wb)
}

// startBareFyne starts the baseline (testdata/barefyne: a Fyne window
// with one label) on the tray's X server, and returns its pid and a
// function that ends it.
func startBareFyne(t *testing.T, p *trayProc) (int, func()) {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "barefyne")
	build := exec.Command("go", "build", "-o", bin, "./testdata/barefyne")
	build.Env = append(os.Environ(), "CGO_ENABLED=1")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the bare Fyne baseline: %v\n%s", err, out)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), "DISPLAY="+p.display, "HOME="+t.TempDir(), noBus(t))
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	stop := func() {
		_ = cmd.Process.Kill()
		<-done
	}
	t.Cleanup(stop)
	return cmd.Process.Pid, stop
}

// focusWindow raises pid's window and gives it the focus (xdotool; there
// is no window manager on the test display), and lets the window see it:
// clicks go to the window on top.
func focusWindow(t *testing.T, p *trayProc, pid int) {
	t.Helper()
	needXdotool(t)
	env := append(os.Environ(), "DISPLAY="+p.display)
	search := exec.Command("xdotool", "search", "--onlyvisible", "--pid", strconv.Itoa(pid))
	search.Env = env
	out, err := search.Output()
	ids := strings.Fields(string(out))
	if err != nil || len(ids) == 0 {
		t.Fatalf("no window of pid %d on %s: %v", pid, p.display, err)
	}
	focus := exec.Command("xdotool", "windowraise", ids[0], "windowfocus", "--sync", ids[0])
	focus.Env = env
	if out, err := focus.CombinedOutput(); err != nil {
		t.Fatalf("xdotool windowfocus: %v: %s", err, out)
	}
	time.Sleep(2 * time.Second)
}

// wakeups is the context switches of every thread of pid so far: each is
// a thread that woke up (a timer, a poll, a message) or was preempted.
func wakeups(pid int) int64 {
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
	var n int64
	for _, task := range tasks {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", pid, task.Name()))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.HasSuffix(k, "ctxt_switches") {
				c, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				n += c
			}
		}
	}
	return n
}

// memSplit is a resident set (MB) by what maps it: the executable's own
// file (code, read-only data, data; the pages it touched, which the
// kernel keeps counting until memory runs short), the GL stack (libGL,
// Mesa's drivers, LLVM), anonymous memory (Go's heap, C's malloc, stacks)
// and the rest (other libraries, fonts, locale files).
type memSplit struct{ total, exe, gl, anon float64 }

func (m memSplit) String() string {
	return fmt.Sprintf("RSS %.1f MB = executable %.1f + GL %.1f + anonymous %.1f + other %.1f",
		m.total, m.exe, m.gl, m.anon, m.total-m.exe-m.gl-m.anon)
}

// splitRSS reads pid's smaps into a memSplit.
func splitRSS(t *testing.T, pid int) memSplit {
	exe, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	f, err := os.Open(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var m memSplit
	var into *float64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if k, v, ok := strings.Cut(line, ":"); ok && !strings.Contains(k, " ") {
			if k == "Rss" {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				m.total += kb / 1024
				if into != nil {
					*into += kb / 1024
				}
			}
			continue
		}
		into = mappingKind(&m, line, exe)
	}
	return m
}

// mappingKind is the memSplit field a mapping's smaps header line counts
// in, or nil for "other".
func mappingKind(m *memSplit, header, exe string) *float64 {
	f := strings.Fields(header)
	path := ""
	if len(f) >= 6 {
		path = strings.Join(f[5:], " ")
	}
	base := filepath.Base(path)
	switch {
	case path == exe:
		return &m.exe
	case path == "" || strings.HasPrefix(path, "[heap]") || strings.HasPrefix(path, "[stack") || strings.HasPrefix(path, "[anon"):
		return &m.anon
	case strings.HasPrefix(base, "libLLVM") || strings.Contains(path, "/dri/") || strings.HasPrefix(base, "libGL") ||
		strings.HasPrefix(base, "libgallium") || strings.HasPrefix(base, "libglapi") || strings.HasPrefix(base, "libEGL"):
		return &m.gl
	}
	return nil
}

// idleReport is what TestIdleCost measured, beside the targets.
func idleReport(secs, use int, tray, fresh, focused, bare, used idleFigures, v soakView) string {
	var b strings.Builder
	fmt.Fprintf(&b, "MCP Sandbox idle cost with 3 live sandboxes (%s, %d cores)\n", time.Now().UTC().Format(time.RFC3339), runtimeCPUs())
	line := func(what string, f idleFigures, cpuT, rssT float64) {
		fmt.Fprintf(&b, "  %-42s CPU %.3f %% of one core over %.0f s (target ≤ %g %%), %.1f wakeups/s\n", what+":", f.cpu, f.secs, cpuT, f.wakeups)
		fmt.Fprintf(&b, "  %-42s %s (target ≤ %g MB)\n", "", f.mem, rssT)
	}
	line("mcp-sandbox-tray, window closed", tray, trayCPUTarget, trayRSSTarget)
	line("mcp-sandbox-window, fresh on Status", fresh, windowCPUTarget, windowRSSTarget)
	fmt.Fprintf(&b, "  %-42s (in the background: another window has the focus)\n", "")
	fmt.Fprintf(&b, "  %-42s CPU %.3f %% of one core over %.0f s, %.1f wakeups/s (Fyne's own rate)\n", "the same window, focused:", focused.cpu, focused.secs, focused.wakeups)
	fmt.Fprintf(&b, "  %-42s CPU %.3f %% of one core over the same %.0f s, %.1f wakeups/s; %s\n", "bare Fyne window (baseline: one label):", bare.cpu, bare.secs, bare.wakeups, bare.mem)
	if bare.cpu > 0 {
		fmt.Fprintf(&b, "  %-42s CPU focused %.2f×, in the background %.2f× the bare Fyne window's (its driver wakes 60 times a second whatever a window shows)\n", "", focused.cpu/bare.cpu, fresh.cpu/bare.cpu)
	}
	if use > 0 {
		line(fmt.Sprintf("mcp-sandbox-window, Status after %d s of use", use), used, windowCPUTarget, windowRSSTarget)
		fmt.Fprintf(&b, "  %-42s (used focused, then measured in the background)\n", "")
		fmt.Fprintf(&b, "  use: %d tabs clicked, %d shown within 3 s; RSS %+.1f MB from fresh to used (target: flat)\n",
			v.clicked, v.shown, used.mem.total-fresh.mem.total)
		if len(v.rss) > 0 {
			fmt.Fprintf(&b, "  RSS while used (MB, once a second): first %.1f, max %.1f, last %.1f; climbing: %q\n",
				v.rss[0], slices.Max(v.rss), v.rss[len(v.rss)-1], flatMemory(v.rss))
		}
	}
	miss := func(what string, got, target float64) {
		if got > target {
			fmt.Fprintf(&b, "  TARGET MISSED: %s %.3g (target ≤ %g)\n", what, got, target)
		}
	}
	miss("idle tray CPU %", tray.cpu, trayCPUTarget)
	miss("idle tray RSS MB", tray.mem.total, trayRSSTarget)
	miss("fresh window CPU %", fresh.cpu, windowCPUTarget)
	miss("fresh window RSS MB", fresh.mem.total, windowRSSTarget)
	if use > 0 {
		miss("used window CPU %", used.cpu, windowCPUTarget)
		miss("used window RSS MB", used.mem.total, windowRSSTarget)
	}
	return b.String()
}
