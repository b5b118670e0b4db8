package sandboxwatch

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// fakeSource is an engine in memory, for what a real one cannot be made to
// do on demand: count calls exactly, fail the events stream.
type fakeSource struct {
	mu     sync.Mutex
	infos  []inventory.Info
	lists  int
	usages int
	events chan Event
	errs   chan error
}

func newFake(infos ...inventory.Info) *fakeSource {
	return &fakeSource{infos: infos, events: make(chan Event), errs: make(chan error, 1)}
}

func (f *fakeSource) List(ctx context.Context) ([]inventory.Info, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.lists++
	return append([]inventory.Info(nil), f.infos...), nil
}

func (f *fakeSource) Usage(ctx context.Context, id string) (backend.Usage, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.usages++
	return backend.Usage{MemoryBytes: 10 << 20, CPUPercent: 12.5, Pids: 3}, nil
}

func (f *fakeSource) Events(ctx context.Context) (<-chan Event, <-chan error) {
	return f.events, f.errs
}

func (f *fakeSource) counts() (lists, usages int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.lists, f.usages
}

func (f *fakeSource) set(infos ...inventory.Info) {
	f.mu.Lock()
	f.infos = infos
	f.mu.Unlock()
}

func box(id string) inventory.Info {
	return inventory.Info{ID: id, ContainerID: "c-" + id, State: "running", CreatedAt: time.Now()}
}

func start(t *testing.T, src Source, o Options) (*Model, chan Snapshot) {
	t.Helper()
	snaps := make(chan Snapshot, 100)
	o.Source = src
	o.OnChange = func(s Snapshot) { snaps <- s }
	m := New(o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); m.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return m, snaps
}

func waitSnap(t *testing.T, snaps chan Snapshot, what string, ok func(Snapshot) bool) Snapshot {
	t.Helper()
	timeout := time.After(5 * time.Second)
	for {
		select {
		case s := <-snaps:
			if ok(s) {
				return s
			}
		case <-timeout:
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// elapse lets d pass on the synctest bubble's clock and waits for the
// model's goroutines to settle: no wall-clock wait.
func elapse(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

func TestEventsDriveTheList(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake(box("aaaa"))
		_, snaps := start(t, src, Options{Debounce: 50 * time.Millisecond})
		waitSnap(t, snaps, "the first list", func(s Snapshot) bool { return len(s.Rows) == 1 })

		// Nothing happens: nothing is listed again, and nothing is sampled.
		elapse(time.Minute)
		if lists, usages := src.counts(); lists != 1 || usages != 0 {
			t.Fatalf("idle model made %d lists and %d usage calls; want 1 and 0", lists, usages)
		}

		// A burst of events is one list.
		src.set(box("aaaa"), box("bbbb"))
		for i := 0; i < 5; i++ {
			src.events <- Event{Action: "start"}
		}
		waitSnap(t, snaps, "the new sandbox", func(s Snapshot) bool { return len(s.Rows) == 2 })
		elapse(time.Second)
		if lists, _ := src.counts(); lists != 2 {
			t.Errorf("a burst of 5 events made %d lists; want 1", lists-1)
		}
	})
}

func TestUsageOnlyWhileLive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake(box("aaaa"), box("bbbb"))
		m, snaps := start(t, src, Options{StatsInterval: 50 * time.Millisecond})
		waitSnap(t, snaps, "the list", func(s Snapshot) bool { return len(s.Rows) == 2 })

		m.SetLive(true)
		s := waitSnap(t, snaps, "usage", func(s Snapshot) bool { return !s.Rows[0].Sampled.IsZero() && !s.Rows[1].Sampled.IsZero() })
		if got := s.Rows[0].CPU(); got != "12.5 %" {
			t.Errorf("CPU = %q", got)
		}
		_, first := src.counts()
		elapse(200 * time.Millisecond)
		m.SetLive(false)
		synctest.Wait()
		// Four intervals, two sandboxes each.
		_, before := src.counts()
		if before-first != 8 {
			t.Errorf("%d usage calls in four intervals while live; want 8 (two sandboxes every interval)", before-first)
		}
		elapse(time.Minute)
		if _, after := src.counts(); after != before {
			t.Errorf("%d usage calls after SetLive(false)", after-before)
		}

		// Usage survives a new list.
		m.Refresh()
		s = waitSnap(t, snaps, "a relist", func(s Snapshot) bool { return true })
		if s.Rows[0].Sampled.IsZero() {
			t.Error("a relist dropped the sampled usage")
		}
	})
}

func TestNoSamplingWithoutSandboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		src := newFake()
		m, snaps := start(t, src, Options{StatsInterval: 20 * time.Millisecond})
		waitSnap(t, snaps, "the list", func(s Snapshot) bool { return true })
		m.SetLive(true)
		elapse(time.Minute)
		if _, usages := src.counts(); usages != 0 {
			t.Errorf("%d usage calls with no sandboxes", usages)
		}
	})
}

func TestStreamFailureEndsRun(t *testing.T) {
	src := newFake(box("aaaa"))
	m := New(Options{Source: src})
	boom := errors.New("engine went away")
	src.errs <- boom
	err := m.Run(context.Background())
	if !errors.Is(err, boom) || !errors.Is(m.Snapshot().Err, boom) {
		t.Errorf("Run = %v, Snapshot().Err = %v; want the stream's error", err, m.Snapshot().Err)
	}
}
