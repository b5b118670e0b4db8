//go:build !windows

package supervisor

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// The test binary re-runs itself as the child: SUPERVISOR_CHILD says how it
// behaves, SUPERVISOR_LOG where it notes its starts.
func TestMain(m *testing.M) {
	if mode := os.Getenv("SUPERVISOR_CHILD"); mode != "" {
		os.Exit(child(mode))
	}
	os.Exit(m.Run())
}

func child(mode string) int {
	// The start is noted once the child's signal handling is in place, so
	// a test that saw it may signal at once.
	sig := make(chan os.Signal, 1)
	switch mode {
	case "serve":
		signal.Notify(sig, syscall.SIGTERM)
	case "stubborn":
		signal.Ignore(syscall.SIGTERM)
		signal.Notify(sig, syscall.SIGUSR1) // nobody sends it: waits until killed
	}
	f, _ := os.OpenFile(os.Getenv("SUPERVISOR_LOG"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	fmt.Fprintf(f, "%d %d %s %s\n", time.Now().UnixNano(), os.Getpid(), os.Getenv("MCP_SANDBOX_TOKEN"), strings.Join(os.Args[1:], " "))
	f.Close()
	switch mode {
	case "crash":
		return 1
	case "serve":
		<-sig
		return 0
	case "stubborn":
		<-sig
	}
	return 2
}

type start struct {
	at   time.Time
	pid  int
	tok  string
	args string
}

func starts(t *testing.T, log string) []start {
	data, _ := os.ReadFile(log)
	var out []start
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.SplitN(line, " ", 4)
		if len(f) < 4 {
			continue
		}
		ns, _ := strconv.ParseInt(f[0], 10, 64)
		pid, _ := strconv.Atoi(f[1])
		out = append(out, start{time.Unix(0, ns), pid, f[2], f[3]})
	}
	return out
}

func childOptions(t *testing.T, mode string) (Options, string) {
	log := filepath.Join(t.TempDir(), "starts")
	exe, _ := os.Executable()
	h := NewHTTPServer(12345, "tok123")
	// A race-enabled child sleeps a second at exit unless told not to.
	o := h.Options(exe, append(os.Environ(), "SUPERVISOR_CHILD="+mode, "SUPERVISOR_LOG="+log, "GORACE=atexit_sleep_ms=0"))
	return o, log
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waits records the back-off of each restart the supervisor logs, so the
// test checks the waits it chose, not wall-clock gaps that a slow start of
// the child (a race-enabled test binary) dominates.
type waits struct {
	mu sync.Mutex
	d  []time.Duration
}

func (w *waits) Enabled(context.Context, slog.Level) bool { return true }
func (w *waits) WithAttrs([]slog.Attr) slog.Handler       { return w }
func (w *waits) WithGroup(string) slog.Handler            { return w }
func (w *waits) Handle(_ context.Context, r slog.Record) error {
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "in" {
			w.mu.Lock()
			w.d = append(w.d, a.Value.Duration())
			w.mu.Unlock()
		}
		return true
	})
	return nil
}

func (w *waits) get() []time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]time.Duration(nil), w.d...)
}

// TestRestartsWithBackoff runs in a synctest bubble: the supervisor's
// back-off timers are on the bubble's clock, which stands still while a
// child runs (a process is no goroutine the bubble waits for) and jumps
// when everything waits on a timer. So the back-offs it chose are exact
// gaps between starts, however slowly a loaded machine starts the child.
func TestRestartsWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o, log := childOptions(t, "crash")
		o.MinBackoff, o.MaxBackoff = 50*time.Millisecond, 400*time.Millisecond
		w := &waits{}
		o.Log = slog.New(w)
		var startedAt []time.Time
		sixth := make(chan struct{})
		o.OnChange = func(st Status) {
			if st.State != Running {
				return
			}
			startedAt = append(startedAt, time.Now())
			if len(startedAt) == 6 {
				close(sixth)
			}
		}
		s := New(o)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { defer close(done); s.Run(ctx) }()
		<-sixth
		cancel()
		<-done

		// Each quick exit doubles the wait, up to MaxBackoff. (A child that
		// ran longer than StableAfter would reset it; on the bubble's
		// clock these run for no time at all.)
		want := []time.Duration{50 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond, 400 * time.Millisecond}
		if got := w.get(); len(got) < len(want) || fmt.Sprint(got[:len(want)]) != fmt.Sprint(want) {
			t.Errorf("back-offs = %v; want %v first", got, want)
		}
		// The supervisor waited exactly that long between starts.
		for i := 1; i < len(startedAt); i++ {
			if gap := startedAt[i].Sub(startedAt[i-1]); gap != want[i-1] {
				t.Errorf("start %d came %v after the one before; want the back-off %v", i, gap, want[i-1])
			}
		}
		// The first five ran to their crash (the sixth was stopped at once).
		if n := len(starts(t, log)); n < 5 {
			t.Errorf("the children noted %d starts, want at least 5", n)
		}
		if got := s.Status(); got.State != Stopped || got.Restarts < 5 || !strings.Contains(got.LastExit, "exit status 1") {
			t.Errorf("Status = %+v; want stopped, ≥5 restarts, last exit status 1", got)
		}
	})
}

func TestPassesCommandLineAndToken(t *testing.T) {
	o, log := childOptions(t, "serve")
	s := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go s.Run(ctx)
	waitFor(t, "the child", func() bool { return len(starts(t, log)) == 1 })
	got := starts(t, log)[0]
	if got.tok != "tok123" || got.args != "serve --http 127.0.0.1:12345" {
		t.Errorf("child saw token %q args %q", got.tok, got.args)
	}
	waitFor(t, "running", func() bool { return s.Status().State == Running })
	if s.Status().PID != got.pid {
		t.Errorf("Status PID %d, child %d", s.Status().PID, got.pid)
	}
}

func TestStopEndsTheChild(t *testing.T) {
	for _, mode := range []string{"serve", "stubborn"} {
		t.Run(mode, func(t *testing.T) {
			o, log := childOptions(t, mode)
			o.StopTimeout = 500 * time.Millisecond
			var changes []State
			o.OnChange = func(st Status) { changes = append(changes, st.State) }
			s := New(o)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() { defer close(done); s.Run(ctx) }()
			waitFor(t, "the child", func() bool { return len(starts(t, log)) == 1 && s.Status().State == Running })
			pid := starts(t, log)[0].pid // noted with its signal handling in place
			began := time.Now()
			cancel()
			select {
			case <-done:
			case <-time.After(5 * time.Second):
				t.Fatal("Run did not return after cancel")
			}
			if err := syscall.Kill(pid, 0); err != syscall.ESRCH {
				t.Errorf("child %d still exists after stop: %v", pid, err)
			}
			if mode == "serve" && time.Since(began) > 400*time.Millisecond {
				t.Errorf("a child that exits on SIGTERM took %v to stop", time.Since(began))
			}
			if s.Status().State != Stopped || len(starts(t, log)) != 1 {
				t.Errorf("after stop: %+v, %d starts", s.Status(), len(starts(t, log)))
			}
			if changes[len(changes)-1] != Stopped {
				t.Errorf("last change %v, want stopped", changes)
			}
		})
	}
}

func TestMissingBinaryBacksOff(t *testing.T) {
	s := New(Options{Command: filepath.Join(t.TempDir(), "nope"), MinBackoff: time.Hour})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Run(ctx) }()
	waitFor(t, "back-off", func() bool { return s.Status().State == Backoff })
	if st := s.Status(); !strings.Contains(st.LastExit, "could not start") || st.NextStart.IsZero() {
		t.Errorf("Status = %+v", st)
	}
	cancel()
	<-done
}

func TestHTTPPathMatchesTheServer(t *testing.T) {
	if got := NewHTTPServer(8765, "t").URL; got != "http://127.0.0.1:8765"+mcpserver.HTTPPath {
		t.Errorf("URL %q does not end in the server's path %q", got, mcpserver.HTTPPath)
	}
}
