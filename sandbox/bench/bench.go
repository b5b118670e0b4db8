package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"sync"
	"time"
)

// Options configures a benchmark run.
type Options struct {
	// Server is the mcp-sandbox binary to measure.
	Server string
	// Docker is the docker CLI for the baselines; empty: found on PATH.
	Docker string
	// Image is the Python image both sides run.
	Image string
	// Pull is the server's images.pull; empty: "missing".
	Pull string
	// Runtime is the server's docker.runtime, and the OCI runtime the
	// baselines' docker run use (runsc for gVisor); empty: the engine's
	// default for both.
	Runtime string
	// Log receives a line per step; nil: none.
	Log io.Writer
	// Floods are the red team's floods Finish runs last; zero: none
	// (DefaultFloods are the sizes).
	Floods Floods
}

// Comparison names, in report order.
const (
	Warm    = "warm run_code print(1)  vs  docker exec python3 -c"
	Create  = "sandbox_create (warm pool)  vs  docker run -d"
	OneShot = "one-shot run_code  vs  docker run --rm"
	// ExecTrue shows what one sandbox_exec costs next to docker exec,
	// both running `true` (its target: speed.go).
	ExecTrue = "sandbox_exec true  vs  docker exec true"
	// List has an absolute target: the server answers from usage it
	// sampled in the background, where docker stats samples on the spot.
	List = "sandbox_list with 5 sandboxes  vs  docker stats --no-stream (5)"
	// ExecIdle is ExecTrue as an assistant makes it, after a pause to think:
	// each side starts idleGap after the one before it ended, so the
	// server has gone quiet (its idle release included) and what a call
	// leaves to do in the background (its sandbox's record) is not done
	// yet when the next comes. No target.
	ExecIdle = "sandbox_exec true after 3 s idle  vs  docker exec true after 3 s idle"
)

// idleGap is the pause before each side of ExecIdle.
const idleGap = 3 * time.Second

// listN is how many sandboxes (and baseline containers) List lists.
const listN = 5

// targets are the goals for each ratio (ours / baseline).
var targets = map[string]float64{Warm: 0.15, Create: 0.10, OneShot: 0.40}

// medianTargets are the goals for a median itself (warm run_code:
// issue 34).
var medianTargets = map[string]time.Duration{List: 20 * time.Millisecond, Warm: 2 * time.Millisecond}

// poolWait bounds the wait for the pool to refill between measurements.
const poolWait = time.Minute

// settle is the pause, untimed, before each side of a comparison. A side
// that ends is not done with the machine: a docker CLI run's process is
// still being torn down and the engine still cleans up after its exec
// while the next side starts. Timed at once, a call of ours that followed
// a docker exec took 0.5-0.7 ms more than one that did not (medians of
// 10 each, both the warm run_code and the sandbox_exec true rows, on this
// 2-core VM), while docker's 60 ms barely noticed ours: alternating the
// order did not even it out. After the pause each side starts on a quiet
// machine, its own process as idle as before (the other side's time
// plus the pause).
const settle = 50 * time.Millisecond

// pause waits settle, or until ctx ends.
func pause(ctx context.Context) { pauseFor(ctx, settle) }

// pauseFor waits d, or until ctx ends.
func pauseFor(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}

// idleWait bounds the wait for the idle server to return its free heap
// (it samples every 2 s and needs one quiet interval).
const idleWait = 15 * time.Second

// idleSettle is how long the idle server's memory is watched after its
// release, the most it reaches being its idle figure: longer than its
// background work's period (the pool's and the engine's 5 s ticks), which
// faults in again the code and data the release handed back.
const idleSettle = 6 * time.Second

// Harness runs the benchmark: a server, its client, and the baselines.
type Harness struct {
	o       Options
	dir     string
	srv     *server
	docker  dockerCLI
	warmID  string // our sandbox for the warm calls
	baseCID string // the baseline's container for docker exec
	// listIDs and listCIDs are the others List lists, besides warmID and
	// baseCID.
	listIDs  []string
	listCIDs []string
	idle     Memory
	// proxy serves the allowlist proxy's rows (proxy.go).
	proxy *proxyBench
	// net serves the allowlist rows through a real sandbox (sandboxnet.go).
	net *sandboxNet

	mu      sync.Mutex
	rounds  int
	ours    map[string][]time.Duration
	base    map[string][]time.Duration
	claims0 int // pool claims when the samples were reset
	// warm are the warm run_code calls with the server's timing of each.
	warm          []warmSample
	execTrueTimes []warmSample // sandbox_exec true's timings
	// floor measures sandbox_exec true's floor (floor.go); floorWhy says
	// why there is none.
	floor        *floorProbe
	floorWhy     string
	floorSamples []floorSample
}

// Start starts the server, waits for its warm pool, measures its idle
// memory, and makes the sandbox and the container the warm calls use.
func Start(ctx context.Context, o Options) (h *Harness, err error) {
	if o.Pull == "" {
		o.Pull = "missing"
	}
	dpath, err := findDocker(o.Docker)
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "mcp-sandbox-bench")
	if err != nil {
		return nil, err
	}
	h = &Harness{o: o, dir: dir, docker: dockerCLI{path: dpath, image: o.Image, runtime: o.Runtime}}
	h.Reset()
	// A failed start closes what it started: hh, since every error
	// return below sets h to nil before this runs.
	hh := h
	defer func() {
		if err != nil {
			hh.Close()
		}
	}()
	// The allowlist rows need curl and 127.0.0.2 (not every host has the
	// address, macOS for one): without them they are left out, said once.
	var allow []string
	if h.net, err = listenSandboxNet(proxyDownloadBytes); err != nil {
		h.logf("%v: the allowlist rows are left out", err)
	} else {
		allow = append(allow, h.net.entry)
	}
	h.logf("starting %s serve (image %s)", o.Server, o.Image)
	if h.srv, err = startServer(ctx, o, dir, allow...); err != nil {
		return nil, err
	}
	if err := h.srv.watch.waitPooled(ctx, poolWait); err != nil {
		return nil, err
	}
	// Idle is how a server spends most of its life: once it has been quiet
	// for a few seconds it returns its free heap, and is measured then.
	trimmed := h.srv.watch.waitTrimmed(ctx, idleWait)
	if h.idle, err = h.srv.idleMemory(ctx, idleSettle); err != nil {
		return nil, err
	}
	h.idle.Released = trimmed
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &created); err != nil {
		return nil, err
	}
	h.warmID = created.SandboxID
	if h.net != nil {
		if err := h.openSandboxNet(ctx); err != nil {
			return nil, err
		}
	}
	if h.baseCID, err = h.docker.runDetached(ctx, randomName("mcp-sandbox-bench-baseline-")); err != nil {
		return nil, err
	}
	// Warm both up once: the first exec in a container is slower.
	if _, err := h.srv.runCode(ctx, map[string]any{"code": "print(1)", "sandbox_id": h.warmID}, "1\n"); err != nil {
		return nil, err
	}
	if err := h.docker.exec(ctx, h.baseCID); err != nil {
		return nil, err
	}
	if h.floor, err = startFloor(ctx, h.baseCID); err != nil {
		h.floorWhy = "the floor's probe did not start: " + err.Error()
	} else if _, _, err := h.floor.round(); err != nil {
		h.floorWhy = "the floor's probe did not answer: " + err.Error()
		h.floor.close()
		h.floor = nil
	}
	if err := h.openForList(ctx); err != nil {
		return nil, err
	}
	h.Reset() // the set-up's own pool claim is not a measured one
	return h, nil
}

// Reset drops the samples taken so far.
func (h *Harness) Reset() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.rounds = 0
	h.ours = map[string][]time.Duration{}
	h.base = map[string][]time.Duration{}
	h.warm, h.execTrueTimes, h.floorSamples = nil, nil, nil
	if h.srv != nil {
		_, h.claims0, _ = h.srv.watch.counts()
	}
}

func (h *Harness) logf(format string, args ...any) {
	if h.o.Log != nil {
		fmt.Fprintf(h.o.Log, "bench: "+format+"\n", args...)
	}
}

// Round measures each comparison once, ours and the baseline one after the
// other, each after the settle pause (in alternating order from round to
// round).
func (h *Harness) Round(ctx context.Context) error {
	h.mu.Lock()
	swap := h.rounds%2 == 1
	h.mu.Unlock()
	// A step's floor side (sandbox_exec true's floor, floor.go) runs
	// last, after a docker CLI run of its own.
	steps := []struct {
		name              string
		pool              bool
		ours, base, floor func(context.Context) (func(), error)
		gap               time.Duration // the pause before each side
	}{
		{Warm, false, h.warmRun, h.dockerExec, nil, settle},
		{Create, true, h.create, h.dockerRunDetached, nil, settle},
		{OneShot, true, h.oneShot, h.dockerRunOnce, nil, settle},
		{ExecTrue, false, h.execTrue, h.dockerExecTrue, h.measureFloor, settle},
		{List, false, h.list, h.dockerStats, nil, settle},
		{ExecIdle, false, h.execIdle, h.dockerExecTrue, nil, idleGap},
	}
	for _, s := range steps {
		if s.pool {
			if err := h.srv.watch.waitPooled(ctx, poolWait); err != nil {
				return err
			}
		}
		type side struct {
			ours, floor bool
			f           func(context.Context) (func(), error)
		}
		order := []side{{ours: true, f: s.ours}, {f: s.base}}
		if swap {
			order[0], order[1] = order[1], order[0]
		}
		if s.floor != nil {
			order = append(order, side{floor: true, f: s.floor})
		}
		for _, sd := range order {
			pauseFor(ctx, s.gap)
			start := time.Now()
			cleanup, err := sd.f(ctx)
			d := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s: %w", s.name, err)
			}
			h.mu.Lock()
			switch {
			case sd.floor: // it keeps its own samples
			case sd.ours:
				h.ours[s.name] = append(h.ours[s.name], d)
			default:
				h.base[s.name] = append(h.base[s.name], d)
			}
			h.mu.Unlock()
			if cleanup != nil {
				cleanup()
			}
		}
	}
	if err := h.speedRound(ctx, swap); err != nil {
		return err
	}
	if err := h.proxyRound(ctx, swap); err != nil {
		return err
	}
	if err := h.sandboxNetRound(ctx, swap); err != nil {
		return err
	}
	h.mu.Lock()
	h.rounds++
	h.mu.Unlock()
	return nil
}

// The measured operations. Each returns an untimed clean-up.

// warmRun is a warm run_code call; its clean-up (untimed) takes the
// server's timing of it for the breakdown.
func (h *Harness) warmRun(ctx context.Context) (func(), error) {
	n := h.srv.watch.timingCount("run_code")
	start := time.Now()
	_, err := h.srv.runCode(ctx, map[string]any{"code": "print(1)", "sandbox_id": h.warmID}, "1\n")
	took := time.Since(start)
	return func() { h.noteTiming(ctx, "run_code", n, took, &h.warm) }, err
}

func (h *Harness) dockerExec(ctx context.Context) (func(), error) {
	return nil, h.docker.exec(ctx, h.baseCID)
}

func (h *Harness) execTrue(ctx context.Context) (func(), error) {
	n := h.srv.watch.timingCount("sandbox_exec")
	start := time.Now()
	if err := h.srv.execTrue(ctx, h.warmID); err != nil {
		return nil, err
	}
	took := time.Since(start)
	return func() { h.noteTiming(ctx, "sandbox_exec", n, took, &h.execTrueTimes) }, nil
}

// execIdle is sandbox_exec true, untracked by the breakdown (ExecIdle).
func (h *Harness) execIdle(ctx context.Context) (func(), error) {
	return nil, h.srv.execTrue(ctx, h.warmID)
}

func (h *Harness) dockerExecTrue(ctx context.Context) (func(), error) {
	_, err := h.docker.run(ctx, "exec", h.baseCID, "true")
	return nil, err
}

// openForList makes the sandboxes and containers that, with the warm
// ones, List lists, and waits until the server has sampled their usage.
func (h *Harness) openForList(ctx context.Context) error {
	for len(h.listIDs) < listN-1 {
		var out struct {
			SandboxID string `json:"sandbox_id"`
		}
		if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &out); err != nil {
			return err
		}
		h.listIDs = append(h.listIDs, out.SandboxID)
		cid, err := h.docker.runDetached(ctx, randomName("mcp-sandbox-bench-baseline-"))
		if err != nil {
			return err
		}
		h.listCIDs = append(h.listCIDs, cid)
	}
	// The first list after a create samples the new sandboxes itself;
	// the measured ones answer from the background samples.
	deadline := time.Now().Add(poolWait)
	for {
		var out listOut
		if err := h.srv.call(ctx, "sandbox_list", nil, &out); err != nil {
			return err
		}
		if out.sampled() >= listN {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("sandbox_list: %d of %d sandboxes sampled after %v", out.sampled(), listN, poolWait)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// closeForList stops what openForList opened.
func (h *Harness) closeForList(ctx context.Context) error {
	var errs []error
	for _, id := range h.listIDs {
		errs = append(errs, h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": id}, nil))
	}
	h.listIDs = nil
	for _, cid := range h.listCIDs {
		errs = append(errs, h.docker.remove(ctx, cid))
	}
	h.listCIDs = nil
	return errors.Join(errs...)
}

// listOut is the part of sandbox_list's result the benchmark checks.
type listOut struct {
	Sandboxes []struct {
		Usage struct {
			MemoryBytes uint64 `json:"memory_bytes"`
			SampledAt   string `json:"sampled_at"`
		} `json:"usage"`
	} `json:"sandboxes"`
}

// sampled counts the sandboxes listed with a usage reading. A server
// without usage.sampled_at (one from before it) counts any memory reading.
func (l listOut) sampled() int {
	n := 0
	for _, s := range l.Sandboxes {
		if s.Usage.SampledAt != "" || s.Usage.MemoryBytes > 0 {
			n++
		}
	}
	return n
}

func (h *Harness) list(ctx context.Context) (func(), error) {
	var out listOut
	if err := h.srv.call(ctx, "sandbox_list", nil, &out); err != nil {
		return nil, err
	}
	if len(out.Sandboxes) < listN {
		return nil, fmt.Errorf("sandbox_list: %d sandboxes, want %d", len(out.Sandboxes), listN)
	}
	return nil, nil
}

func (h *Harness) dockerStats(ctx context.Context) (func(), error) {
	_, err := h.docker.run(ctx, append([]string{"stats", "--no-stream", "--format", "{{.MemUsage}}", h.baseCID}, h.listCIDs...)...)
	return nil, err
}

func (h *Harness) create(ctx context.Context) (func(), error) {
	var out struct {
		SandboxID string `json:"sandbox_id"`
	}
	if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &out); err != nil {
		return nil, err
	}
	return func() { _ = h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": out.SandboxID}, nil) }, nil
}

func (h *Harness) dockerRunDetached(ctx context.Context) (func(), error) {
	id, err := h.docker.runDetached(ctx, "")
	if err != nil {
		return nil, err
	}
	return func() { _ = h.docker.remove(ctx, id) }, nil
}

func (h *Harness) oneShot(ctx context.Context) (func(), error) {
	_, err := h.srv.runCode(ctx, map[string]any{"code": "print(1)"}, "1\n")
	// The server removes the sandbox in the background; give it a moment
	// so the removal does not land in the next measurement.
	return func() { time.Sleep(300 * time.Millisecond) }, err
}

func (h *Harness) dockerRunOnce(ctx context.Context) (func(), error) {
	return nil, h.docker.runOnce(ctx)
}

// Finish measures what is measured once — the previews, the server's memory with ten
// sandboxes open, twenty concurrent one-shot runs, the floods — and returns the report.
func (h *Harness) Finish(ctx context.Context) (Report, error) {
	// Previews are measured once, previewN requests a side.
	perr := h.previewRow(ctx)
	rep := h.report()
	h.logSandboxNet(rep)
	var serr error
	rep.Surface, serr = measureSurface(ctx, h.srv.sess, h.srv.watch)
	// Room for the ten under max_sandboxes.
	errs := []error{perr, serr, h.closeForList(ctx)}
	kb, err := h.tenOpen(ctx)
	rep.RSS10KB = kb
	errs = append(errs, err)
	rep.Concurrent, err = h.concurrent(ctx, 20)
	errs = append(errs, err)
	h.logf("floods (issue 31): peak server memory under each")
	rep.Floods, err = h.runFloods(ctx)
	errs = append(errs, err)
	return rep, errors.Join(errs...)
}

// tenOpen opens ten sandboxes, runs code in each (so each has its
// interpreter), reads the server's memory, and stops them.
func (h *Harness) tenOpen(ctx context.Context) (int64, error) {
	var ids []string
	defer func() {
		for _, id := range ids {
			_ = h.srv.call(ctx, "sandbox_stop", map[string]any{"sandbox_id": id}, nil)
		}
	}()
	for i := 0; i < 10; i++ {
		var out struct {
			SandboxID string `json:"sandbox_id"`
		}
		if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python"}, &out); err != nil {
			return 0, err
		}
		ids = append(ids, out.SandboxID)
		if _, err := h.srv.runCode(ctx, map[string]any{"code": "x = 1\nprint(x)", "sandbox_id": out.SandboxID}, "1\n"); err != nil {
			return 0, err
		}
	}
	m, err := h.srv.memory()
	return m.RSSKB, err
}

// concurrent runs n one-shot run_code calls at once.
func (h *Harness) concurrent(ctx context.Context, n int) (Concurrent, error) {
	c := Concurrent{N: n}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := h.srv.runCode(ctx, map[string]any{"code": fmt.Sprintf("print(%d)", i)}, fmt.Sprintf("%d\n", i))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, err)
				return
			}
			c.OK++
		}()
	}
	wg.Wait()
	c.Wall = time.Since(start)
	return c, errors.Join(errs...)
}

// report summarises the samples taken since the last Reset.
func (h *Harness) report() Report {
	h.mu.Lock()
	defer h.mu.Unlock()
	dv, _ := h.docker.run(context.Background(), "version", "--format", "{{.Server.Version}}")
	_, claims, _ := h.srv.watch.counts()
	rep := Report{
		Rounds: h.rounds, Image: h.o.Image, Docker: dv, Runtime: h.o.Runtime, CPUs: runtime.NumCPU(),
		IdleRSSKB: h.idle.RSSKB, Idle: h.idle, PoolClaims: claims - h.claims0, When: time.Now().UTC(),
		WarmBreakdown:     breakdownOf("interpreter", h.warm),
		ExecTrueBreakdown: breakdownOf("command", h.execTrueTimes),
		ExecTrueFloor:     floorOf(h.floorSamples, h.floorWhy),
	}
	names := append(append([]string{Warm, Create, OneShot, ExecTrue, List, ExecIdle}, speedNames...), proxyNames...)
	if h.net != nil {
		names = append(names, sandboxNetNames...)
	}
	for _, name := range names {
		o, b := summarize(h.ours[name]), summarize(h.base[name])
		rep.Comparisons = append(rep.Comparisons, Comparison{
			Name: name, Ours: o, Baseline: b, Ratio: ratio(o.Median, b.Median), P95Ratio: ratio(o.P95, b.P95), Target: targets[name],
			TargetMedian: medianTargets[name],
		})
	}
	return rep
}

// Close stops the server (which removes its sandboxes and pool) and the
// baseline container.
func (h *Harness) Close() error {
	var errs []error
	if h.proxy != nil {
		h.proxy.close()
	}
	if h.net != nil {
		h.net.stop()
	}
	for _, cid := range h.listCIDs {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errs = append(errs, h.docker.remove(ctx, cid))
		cancel()
	}
	if h.srv != nil {
		errs = append(errs, h.srv.close())
	}
	if h.floor != nil {
		h.floor.close()
	}
	if h.baseCID != "" {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		errs = append(errs, h.docker.remove(ctx, h.baseCID))
		cancel()
	}
	errs = append(errs, os.RemoveAll(h.dir))
	return errors.Join(errs...)
}
