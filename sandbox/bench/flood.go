package bench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Floods are the red team's floods (issue 31), run against the measured
// server once, each with the server's peak resident memory beside its
// bound. They report; they never fail on a figure (the real-layer
// regression tests in sandbox/mcpserver and sandbox are the guards).
type Floods struct {
	// ReadMiB is the size of the file each parallel read_file reads and of
	// each big figure; 0: the floods are left out.
	ReadMiB int
	// Reads is how many read_file calls run at once (12).
	Reads int
	// Outputs is how many endless printers run at once, each until its
	// timeout (OutputSeconds).
	Outputs       int
	OutputSeconds int
	// Slow is how many connections trickle a body without a token.
	Slow int
	// Stalled is how many preview readers ask for a big file and never read.
	Stalled int
}

// DefaultFloods are the sizes, which CI runs (about 40 s in all).
var DefaultFloods = Floods{ReadMiB: 16, Reads: 12, Outputs: 4, OutputSeconds: 5, Slow: 300, Stalled: 50}

// Flood names, in report order.
const (
	FloodReads   = "parallel read_file"
	FloodFigures = "figure flood (run_code)"
	FloodOutput  = "output flood (sandbox_exec)"
	FloodSlow    = "trickled HTTP bodies without a token"
	FloodStalled = "stalled preview readers"
)

// Flood is one flood's row.
type Flood struct {
	Name string `json:"name"`
	What string `json:"what"` // its size, e.g. "12 × 16 MiB"
	// PeakKB is the server's peak resident memory during the flood
	// (VmHWM after a reset, or the highest VmRSS sampled).
	PeakKB  int64         `json:"peak_rss_kb"`
	BoundKB int64         `json:"bound_kb"`
	Took    time.Duration `json:"took_ns"`
	// Latency is a real client's time meanwhile (HTTP: a request with
	// the token; preview: a fresh reader's page), with its bound.
	Latency      time.Duration `json:"latency_ns,omitempty"`
	LatencyBound time.Duration `json:"latency_bound_ns,omitempty"`
	Note         string        `json:"note,omitempty"`
	Err          string        `json:"error,omitempty"`
}

// Bounds from issue 31 and the regression tests that guard them.
const (
	readsBoundKB = 250 << 10
	floodBoundKB = 150 << 10
	slowAnswer   = time.Second      // "answered at once"
	slowWithin   = 20 * time.Second // every trickled body closed or answered 401
	freshPage    = 5 * time.Second
)

// peakMeter measures a process's peak resident memory over a span: it
// resets the kernel's high-water mark (clear_refs 5) and also samples
// VmRSS, for kernels or hosts where the reset is refused.
type peakMeter struct {
	pid     int
	reset   bool
	stop    chan struct{}
	done    chan struct{}
	mu      sync.Mutex
	sampled int64
}

func startPeak(pid int) *peakMeter {
	m := &peakMeter{pid: pid, stop: make(chan struct{}), done: make(chan struct{})}
	m.reset = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil
	go m.sample()
	return m
}

func (m *peakMeter) sample() {
	defer close(m.done)
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		if rss, _, err := statusKB(m.pid); err == nil {
			m.mu.Lock()
			m.sampled = max(m.sampled, rss)
			m.mu.Unlock()
		}
		select {
		case <-m.stop:
			return
		case <-t.C:
		}
	}
}

// end stops sampling and returns the peak in kB.
func (m *peakMeter) end() int64 {
	close(m.stop)
	<-m.done
	m.mu.Lock()
	peak := m.sampled
	m.mu.Unlock()
	if _, hwm, err := statusKB(m.pid); err == nil && m.reset {
		peak = max(peak, hwm)
	}
	return peak
}

// statusKB reads VmRSS and VmHWM of pid.
func statusKB(pid int) (rss, hwm int64, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		for name, dst := range map[string]*int64{"VmRSS:": &rss, "VmHWM:": &hwm} {
			if v, ok := strings.CutPrefix(line, name); ok {
				*dst, _ = strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			}
		}
	}
	if rss == 0 {
		return 0, 0, errors.New("no VmRSS in /proc status")
	}
	return rss, hwm, nil
}

// measure runs f as the flood row r against the process pid.
func measure(pid int, r Flood, f func(*Flood) error) Flood {
	m := startPeak(pid)
	start := time.Now()
	err := f(&r)
	r.Took = time.Since(start)
	r.PeakKB = m.end()
	if err != nil {
		r.Err = err.Error()
	}
	return r
}

// runFloods runs every flood against h's server (the HTTP one against a
// second server of the same build).
func (h *Harness) runFloods(ctx context.Context) ([]Flood, error) {
	f := h.o.Floods
	if f.ReadMiB <= 0 {
		return nil, nil
	}
	pid := h.srv.cmd.Process.Pid
	mib := fmt.Sprintf("%d MiB", f.ReadMiB)
	rows := []Flood{
		measure(pid, Flood{Name: FloodReads, What: fmt.Sprintf("%d × %s", f.Reads, mib), BoundKB: readsBoundKB}, func(r *Flood) error { return h.floodReads(ctx, r) }),
		measure(pid, Flood{Name: FloodFigures, What: fmt.Sprintf("16 × %s + 200 small", mib), BoundKB: floodBoundKB}, func(r *Flood) error { return h.floodFigures(ctx, r) }),
		measure(pid, Flood{Name: FloodOutput, What: fmt.Sprintf("%d × yes for %d s", f.Outputs, f.OutputSeconds), BoundKB: floodBoundKB}, func(r *Flood) error { return h.floodOutput(ctx, r) }),
		h.floodSlow(ctx),
		measure(pid, Flood{Name: FloodStalled, What: fmt.Sprintf("%d readers of %d MiB", f.Stalled, 2*f.ReadMiB), BoundKB: floodBoundKB, LatencyBound: freshPage},
			func(r *Flood) error { return h.floodStalled(ctx, r) }),
	}
	var errs []error
	for _, r := range rows {
		if r.Err != "" {
			errs = append(errs, fmt.Errorf("%s: %s", r.Name, r.Err))
		}
	}
	return rows, errors.Join(errs...)
}

// floodSandbox creates a sandbox for a flood, with room for its files.
func (h *Harness) floodSandbox(ctx context.Context) (string, func(), error) {
	var out struct {
		SandboxID string `json:"sandbox_id"`
	}
	if err := h.srv.call(ctx, "sandbox_create", map[string]any{"language": "python", "memory_mb": 512}, &out); err != nil {
		return "", nil, err
	}
	return out.SandboxID, func() {
		_ = h.srv.call(context.WithoutCancel(ctx), "sandbox_stop", map[string]any{"sandbox_id": out.SandboxID}, nil)
	}, nil
}

// floodReads reads a big file (text and random bytes, alternately) in
// Reads parallel read_file calls.
func (h *Harness) floodReads(ctx context.Context, r *Flood) error {
	id, stop, err := h.floodSandbox(ctx)
	if err != nil {
		return err
	}
	defer stop()
	n := h.o.Floods.ReadMiB << 20
	mk := fmt.Sprintf("yes abcdefghijklmnopqrstuvwxyz0123456789 | head -c %d > big.txt && head -c %d /dev/urandom > big.bin", n, n)
	if err := h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": id, "command": mk, "timeout_seconds": 120}, nil); err != nil {
		return err
	}
	return parallel(h.o.Floods.Reads, func(i int) error {
		file := []string{"big.txt", "big.bin"}[i%2]
		return h.srv.call(ctx, "read_file", map[string]any{"sandbox_id": id, "path": file, "max_bytes": n}, nil)
	})
}

// parallel runs f(0..n-1) at once and joins their errors.
func parallel(n int, f func(int) error) error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = f(i) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// figuresPy sends figures on the resident interpreter's frame channel, as
// any code in the sandbox can: 16 big ones (each over limits.image_bytes),
// then 200 small ones. %d is the big ones' size.
const figuresPy = `import gc, struct, zlib
ch = next(o for o in gc.get_objects() if type(o).__name__ == 'Channel')
def png(n):
    h = struct.pack('>IIBBBBB', 1, 1, 8, 0, 0, 0, 0)
    return b'\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR' + h + struct.pack('>I', zlib.crc32(b'IHDR' + h)) + b'p' * n
big = png(%d)
for _ in range(16): ch.send('fig', big)
small = png(1000)
for _ in range(200): ch.send('fig', small)
'sent'`

func (h *Harness) floodFigures(ctx context.Context, r *Flood) error {
	id, stop, err := h.floodSandbox(ctx)
	if err != nil {
		return err
	}
	defer stop()
	var out runOut
	if err := h.srv.call(ctx, "run_code", map[string]any{"sandbox_id": id, "code": fmt.Sprintf(figuresPy, h.o.Floods.ReadMiB<<20)}, &out); err != nil {
		return err
	}
	if out.ExitCode != 0 {
		return fmt.Errorf("run_code: exit %d: %s", out.ExitCode, clipped(out.Stderr))
	}
	return nil
}

// floodOutput runs Outputs endless printers at once in one sandbox, each
// until its timeout.
func (h *Harness) floodOutput(ctx context.Context, r *Flood) error {
	id, stop, err := h.floodSandbox(ctx)
	if err != nil {
		return err
	}
	defer stop()
	return parallel(h.o.Floods.Outputs, func(int) error {
		return h.srv.call(ctx, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "yes 'an endless line of output'", "timeout_seconds": h.o.Floods.OutputSeconds}, nil)
	})
}

func clipped(s string) string {
	if len(s) > 200 {
		return s[:200] + "…"
	}
	return s
}
