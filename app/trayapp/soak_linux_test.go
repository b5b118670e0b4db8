package trayapp

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// soakSeconds is how long TestWindowSoak churns: MCP_SANDBOX_SOAK_SECONDS,
// else 120 (the ttl sandboxes expire after 60 s plus the engine's 5 s tick).
func soakSeconds(t *testing.T) int {
	v := os.Getenv("MCP_SANDBOX_SOAK_SECONDS")
	if v == "" {
		return 120
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 90 {
		t.Fatalf("MCP_SANDBOX_SOAK_SECONDS=%q: want a number of seconds, at least 90", v)
	}
	return n
}

// churnCounts is what the churn did, for the report.
type churnCounts struct {
	created, stopped, stoppedCLI, oneShots, ttl, quits, failed atomic.Int64
}

// soakTabs is the order the soak shows the tabs in: the Sandboxes tab every
// other time, as the one whose rows vanish under it.
var soakTabs = []string{ui.TabSandboxes, ui.TabStatus, ui.TabSandboxes, ui.TabClients,
	ui.TabSandboxes, ui.TabSettings, ui.TabSandboxes, ui.TabActivity}

// The window that cannot crash on data, on the real binaries: the tray's
// window is open while servers of several clients create, stop (by the
// tool and by `mcp-sandbox stop`), run one-shot run_code, let sandboxes
// expire (ttl 1 minute) and quit with sandboxes alive, with the warm pool
// on, several times a second, for MCP_SANDBOX_SOAK_SECONDS (120 by
// default). Meanwhile the tabs are clicked in turn (xdotool) and rows of
// the Sandboxes table selected as they come and go. The window process
// must live throughout, its RSS must stay flat after warm-up (the median
// of the last third within +30 % of the first third's, and no climb
// through every sixth), and the tray must not report a window crash.
func TestWindowSoak(t *testing.T) {
	skipUnderRace(t)
	needXdotool(t)
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	secs := soakSeconds(t)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	cfg := filepath.Join(p.home, ".config", "mcp-sandbox", "config.toml")
	if err := os.WriteFile(cfg, []byte(strings.Replace(apptest.ConfigTOML(), "size = 0", "size = 1\nlanguages = [\"python\"]", 1)+"\n[limits]\nmax_sandboxes = 30\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	wpid := openWindow(t, p, m, "soak-start")

	ctx, cancel := context.WithTimeout(context.Background(), time.Duration(secs)*time.Second)
	defer cancel()
	var n churnCounts
	var wg sync.WaitGroup
	ttlIDs := churn(t, ctx, &wg, p.home, &n)

	v := watchWindow(t, ctx, p, wpid)
	cancel() // the churn ends with the soak, or at once when the window died
	wg.Wait()
	if v.died != "" {
		t.Fatalf("%s\ntray log:\n%s", v.died, p.log())
	}
	windowShown(t, p, "soak-end")
	if strings.Contains(p.log(), "ended unexpectedly") {
		t.Errorf("the tray reported a window crash:\n%s", p.log())
	}
	if !alive(wpid) {
		t.Fatalf("the window process %d ended\ntray log:\n%s", wpid, p.log())
	}

	// The churn happened and the window saw it.
	changes := len(headlineLine.FindAllString(p.windowLog(), -1))
	report := soakReport(secs, &n, v, changes)
	t.Log("\n" + report)
	os.WriteFile(filepath.Join(screenshotDir(t), "soak.txt"), []byte(report), 0o644)
	for _, tab := range []string{ui.TabStatus, ui.TabSandboxes, ui.TabClients, ui.TabSettings, ui.TabActivity} {
		if !strings.Contains(p.windowLog(), "msg=view tab="+tab+" visible=true") {
			t.Errorf("the window never showed the %s tab: the clicks missed", tab)
		}
	}
	if n.created.Load() < int64(secs/4) || n.oneShots.Load() < 5 || changes < 20 {
		t.Errorf("the churn was too thin to prove anything (see the report)")
	}
	expired := 0
	for _, id := range ttlIDs.old(time.Now().Add(-80 * time.Second)) {
		if !exists(t, cli, id) {
			expired++
		}
	}
	if expired == 0 {
		t.Errorf("no ttl sandbox expired during the soak")
	}
	if v.shown < v.clicked*3/4 {
		t.Errorf("the window showed %d of the %d tabs clicked within 3 s", v.shown, v.clicked)
	}
	if why := flatMemory(v.rss); why != "" {
		t.Errorf("the window's memory is not flat: %s", why)
	}
	p.stop(t)
}

// idsAt is the sandbox ids made, with when, for the expiry check.
type idsAt struct {
	mu  sync.Mutex
	ids map[string]time.Time
}

func (s *idsAt) add(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ids[id] = time.Now()
}

// old lists the ids made before t.
func (s *idsAt) old(t time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for id, at := range s.ids {
		if at.Before(t) {
			out = append(out, id)
		}
	}
	return out
}

// churner is the soak's clients: servers of their own in one home.
type churner struct {
	t      *testing.T
	ctx    context.Context
	wg     *sync.WaitGroup
	home   string
	server string
	n      *churnCounts
	ttl    *idsAt
}

// churn starts the clients, each a server of its own in home, on wg until
// ctx ends, and returns the ttl sandboxes it leaves to expire.
func churn(t *testing.T, ctx context.Context, wg *sync.WaitGroup, home string, n *churnCounts) *idsAt {
	t.Helper()
	c := &churner{t: t, ctx: ctx, wg: wg, home: home, n: n, ttl: &idsAt{ids: map[string]time.Time{}},
		server: filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), "mcp-sandbox")}
	c.loop("soak-claude", 0, c.createStop)
	c.loop("soak-cursor", 300*time.Millisecond, c.createStop)
	c.loop("soak-oneshot", 0, func(s *bundled.Session) {
		if c.call(s, "run_code", map[string]any{"code": "print(sum(range(10)))"}, nil) {
			n.oneShots.Add(1)
		}
	})
	c.loop("soak-ttl", 15*time.Second, func(s *bundled.Session) {
		var out struct {
			ID string `json:"sandbox_id"`
		}
		if c.call(s, "sandbox_create", map[string]any{"language": "python", "ttl_minutes": 1}, &out) {
			n.ttl.Add(1)
			c.ttl.add(out.ID)
		}
	})
	wg.Add(1)
	go c.quitter()
	return c.ttl
}

func (c *churner) connect(name string) (*bundled.Session, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return bundled.Connect(ctx, bundled.ConnectOptions{Path: c.server, ClientName: name, Getenv: func(k string) string {
		if k == "HOME" {
			return c.home
		}
		return os.Getenv(k)
	}})
}

// loop connects a client called name and runs step, then waits every,
// until the soak ends; the client then quits.
func (c *churner) loop(name string, every time.Duration, step func(s *bundled.Session)) {
	s, err := c.connect(name)
	if err != nil {
		c.t.Fatalf("connect %s: %v", name, err)
	}
	c.wg.Add(1)
	go func() {
		defer c.wg.Done()
		defer s.Close()
		for c.ctx.Err() == nil {
			step(s)
			select {
			case <-c.ctx.Done():
			case <-time.After(every):
			}
		}
	}()
}

// call calls a tool and counts a failure.
func (c *churner) call(s *bundled.Session, tool string, args map[string]any, out any) bool {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := s.Call(ctx, tool, args, out); err != nil {
		c.n.failed.Add(1)
		c.t.Logf("%s: %v", tool, err)
		return false
	}
	return true
}

// createStop creates a sandbox, runs code in it and stops it: every third
// with `mcp-sandbox stop`, the others with sandbox_stop.
func (c *churner) createStop(s *bundled.Session) {
	var out struct {
		ID string `json:"sandbox_id"`
	}
	if !c.call(s, "sandbox_create", map[string]any{"language": "python"}, &out) {
		return
	}
	c.n.created.Add(1)
	c.call(s, "run_code", map[string]any{"sandbox_id": out.ID, "code": "print(6*7)"}, nil)
	if c.n.created.Load()%3 == 0 {
		cmd := exec.Command(c.server, "stop", out.ID)
		cmd.Env = []string{"HOME=" + c.home, "PATH=" + os.Getenv("PATH")}
		if b, err := cmd.CombinedOutput(); err != nil {
			c.n.failed.Add(1)
			c.t.Logf("mcp-sandbox stop %s: %v %s", out.ID, err, b)
			return
		}
		c.n.stoppedCLI.Add(1)
		return
	}
	if c.call(s, "sandbox_stop", map[string]any{"sandbox_id": out.ID}, nil) {
		c.n.stopped.Add(1)
	}
}

// quitter is a client that quits with two sandboxes alive, every 20 s:
// its server removes them.
func (c *churner) quitter() {
	defer c.wg.Done()
	for c.ctx.Err() == nil {
		s, err := c.connect("soak-quitter")
		if err != nil {
			c.n.failed.Add(1)
			c.t.Logf("connect soak-quitter: %v", err)
			return
		}
		for i := 0; i < 2; i++ {
			if c.call(s, "sandbox_create", map[string]any{"language": "python"}, nil) {
				c.n.created.Add(1)
			}
		}
		time.Sleep(2 * time.Second)
		s.Close()
		c.n.quits.Add(1)
		select {
		case <-c.ctx.Done():
		case <-time.After(20 * time.Second):
		}
	}
}

// soakView is what watchWindow saw: the window's RSS (MiB) once a
// second, how many tabs it clicked and how many of those the window
// logged in view within 3 s, and why the window died ("" while it lives).
type soakView struct {
	rss            []float64
	clicked, shown int
	died           string
}

// watchWindow clicks through the tabs every other second and selects rows
// of the Sandboxes table until ctx ends, while sampleWindow samples the
// window's RSS.
func watchWindow(t *testing.T, ctx context.Context, p *trayProc, pid int) (v soakView) {
	t.Helper()
	samples := make(chan []float64, 1)
	sctx, stop := context.WithCancel(ctx)
	go func() { samples <- sampleWindow(sctx, pid) }()
	defer func() {
		stop()
		v.rss = <-samples
		if v.died == "" && !alive(pid) {
			v.died = fmt.Sprintf("the window process %d died", pid)
		}
	}()
	dl, _ := ctx.Deadline()
	midway, shot := time.Now().Add(time.Until(dl)/2), false
	for ctx.Err() == nil {
		if !alive(pid) || !slices.Contains(windowChildren(t, p.pid), pid) {
			v.died = fmt.Sprintf("the window process %d died after %d tabs", pid, v.clicked)
			return v
		}
		tab := soakTabs[v.clicked%len(soakTabs)]
		if err := p.clickAt(tabX[tab], 21); err != nil {
			v.died = fmt.Sprintf("click the %s tab: %v (the window process alive: %v)", tab, err, alive(pid))
			return v
		}
		v.clicked++
		for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
			if p.windowTab() == tab {
				v.shown++
				break
			}
		}
		if tab == ui.TabSandboxes && p.windowTab() == tab {
			// Select a row, on each visit the next one down or back up,
			// as rows come and go. One click a visit: two, however far
			// apart they are sent, reach a window stalled by the churn
			// together, and on one tall row (long names wrap) they are
			// a double click, which opens its details over the tabs.
			p.clickAt(300, 140+60*(v.clicked/2%2))
			if !shot && time.Now().After(midway) {
				windowShown(t, p, "soak-sandboxes-midway")
				shot = true
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
	return v
}

// sampleWindow reads pid's VmRSS (MiB) once a second until ctx ends or
// the process does.
func sampleWindow(ctx context.Context, pid int) []float64 {
	var rss []float64
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return rss
		case <-tick.C:
		}
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
		if err != nil || !alive(pid) {
			return rss
		}
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
				kb, _ := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 64)
				rss = append(rss, kb/1024)
			}
		}
	}
}

// flatMemory says why the RSS samples (one a second) are not flat, or "".
// The first quarter (at least 45 samples) is warm-up: fonts, textures,
// every tab's first build and the heap growing to its steady size (the
// window's RSS rises for about a minute of churn, then stays within a few
// MiB: a 300 s run went from 182 to about 240 MiB by 70 s and stayed
// there). After it, the last third's median must be within +30 % of the
// first third's, and the medians of six equal stretches must not rise at
// every step by more than 15 % in all.
func flatMemory(rss []float64) string {
	warm := soakWarmUp(rss)
	if len(rss)-warm < 30 {
		return fmt.Sprintf("only %d samples after warm-up", len(rss)-warm)
	}
	s := rss[warm:]
	first, last := thirds(s)
	if last > first*1.3 {
		return fmt.Sprintf("the last third's median RSS %.1f MiB is above the first third's %.1f MiB + 30 %%", last, first)
	}
	var meds []float64
	for i := 0; i < 6; i++ {
		meds = append(meds, median(s[i*len(s)/6:(i+1)*len(s)/6]))
	}
	climbing := true
	for i := 1; i < len(meds); i++ {
		climbing = climbing && meds[i] > meds[i-1]
	}
	if climbing && meds[5] > meds[0]*1.15 {
		return fmt.Sprintf("the RSS climbs through every sixth of the run: %.1f MiB", meds)
	}
	return ""
}

// soakWarmUp is how many of the first samples are warm-up.
func soakWarmUp(rss []float64) int { return max(45, len(rss)/4) }

// thirds is the medians of the first and the last third of s.
func thirds(s []float64) (first, last float64) {
	third := len(s) / 3
	return median(s[:third]), median(s[len(s)-third:])
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

// soakReport is what the soak measured, for the log and the artifacts.
func soakReport(secs int, n *churnCounts, v soakView, changes int) string {
	rss := v.rss
	var b strings.Builder
	events := n.created.Load() + n.stopped.Load() + n.stoppedCLI.Load() + 2*n.oneShots.Load() + n.ttl.Load() + n.quits.Load()
	fmt.Fprintf(&b, "Window soak: %d s, %s\n", secs, time.Now().UTC().Format(time.RFC3339))
	fmt.Fprintf(&b, "  churn: %d created (pool on), %d stopped by sandbox_stop, %d by `mcp-sandbox stop`, %d one-shot run_code, %d with ttl 1 min left to expire, %d clients quit with sandboxes alive, %d calls failed\n",
		n.created.Load(), n.stopped.Load(), n.stoppedCLI.Load(), n.oneShots.Load(), n.ttl.Load(), n.quits.Load(), n.failed.Load())
	fmt.Fprintf(&b, "  about %.1f rows came or went a second; the window logged %d headline changes; %d tabs clicked, %d of them shown within 3 s\n",
		float64(events)/float64(secs), changes, v.clicked, v.shown)
	if len(rss) > 0 {
		fmt.Fprintf(&b, "  window RSS (MiB, once a second): first %.1f, max %.1f, last %.1f; verdict: %q\n",
			rss[0], slices.Max(rss), rss[len(rss)-1], flatMemory(rss))
		if warm := soakWarmUp(rss); len(rss)-warm >= 30 {
			f, l := thirds(rss[warm:])
			fmt.Fprintf(&b, "  after %d s of warm-up: median of the first third %.1f MiB, of the last third %.1f MiB (%+.1f %%)\n",
				warm, f, l, (l/f-1)*100)
		}
		fmt.Fprintf(&b, "  samples: %.0f\n", rss)
	}
	return b.String()
}
