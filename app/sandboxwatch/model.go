package sandboxwatch

import (
	"context"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// Source is where the model's data comes from; DockerSource is the real
// one.
type Source interface {
	// List returns every managed sandbox with its limits, without usage.
	List(ctx context.Context) ([]inventory.Info, error)
	// Usage samples one container's live resource use.
	Usage(ctx context.Context, containerID string) (backend.Usage, error)
	// Events delivers a value for every change to a managed sandbox until
	// ctx is done; the error channel receives the error that ended the
	// stream.
	Events(ctx context.Context) (<-chan Event, <-chan error)
}

// Event is a change to a managed sandbox.
type Event struct {
	// Action is what happened: create, start, die, destroy, rename, …, or
	// "record" when a server updated the sandbox's record.
	Action      string
	ContainerID string
}

// Row is one sandbox as the Sandboxes tab shows it.
type Row struct {
	inventory.Info
	// Sampled is when Usage was last sampled; zero when it has not been.
	Sampled time.Time
}

// Snapshot is the model's state at one moment.
type Snapshot struct {
	// Rows lists the sandboxes, oldest first.
	Rows []Row
	// Err is why the last list failed (Docker unreachable), or nil.
	Err error
	// Updated is when the snapshot was taken.
	Updated time.Time
}

// Options configures a Model.
type Options struct {
	Source Source
	// StatsInterval is how often usage is sampled while live; default 2s.
	StatsInterval time.Duration
	// Debounce gathers a burst of events into one list; default 150ms.
	Debounce time.Duration
	// OnChange is called with every new snapshot, from the model's
	// goroutine; it must not block (hand the snapshot to the UI with
	// fyne.Do).
	OnChange func(Snapshot)
	Log      *slog.Logger
}

// Model is the events-driven list of sandboxes.
type Model struct {
	o       Options
	live    atomic.Bool
	wake    chan struct{}
	refresh chan struct{}

	mu  sync.Mutex
	cur Snapshot
}

// New returns a model; Run starts it.
func New(o Options) *Model {
	if o.StatsInterval <= 0 {
		o.StatsInterval = 2 * time.Second
	}
	if o.Debounce <= 0 {
		o.Debounce = 150 * time.Millisecond
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Model{o: o, wake: make(chan struct{}, 1), refresh: make(chan struct{}, 1)}
}

// Snapshot returns the latest snapshot.
func (m *Model) Snapshot() Snapshot {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// SetLive turns usage sampling on (someone is looking) or off.
func (m *Model) SetLive(on bool) {
	if m.live.Swap(on) != on {
		signal(m.wake)
	}
}

// Refresh asks for a new list now (after the tray stopped a sandbox, say).
func (m *Model) Refresh() { signal(m.refresh) }

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// Run keeps the snapshot current until ctx is done (it returns nil) or the
// events stream fails (it returns the stream's error, and the snapshot's
// Err says so); the caller decides when to try again.
func (m *Model) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	// Subscribe before listing, so no change falls between the two.
	events, errs := m.o.Source.Events(ctx)
	m.relist(ctx)

	var debounce <-chan time.Time
	stats := time.NewTimer(time.Hour)
	stats.Stop()
	armed := false
	arm := func() {
		want := m.live.Load() && len(m.Snapshot().Rows) > 0
		switch {
		case want && !armed:
			stats.Reset(0)
		case !want && armed:
			stats.Stop()
		}
		armed = want
	}
	arm()
	for {
		select {
		case <-ctx.Done():
			return nil
		case err := <-errs:
			if ctx.Err() != nil {
				return nil
			}
			m.publish(func(s *Snapshot) { s.Err = err })
			return err
		case _, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if debounce == nil {
				debounce = time.After(m.o.Debounce)
			}
			continue
		case <-debounce:
			debounce = nil
			m.relist(ctx)
		case <-m.refresh:
			m.relist(ctx)
		case <-m.wake:
		case <-stats.C:
			armed = false
			m.sample(ctx)
			if m.live.Load() {
				stats.Reset(m.o.StatsInterval)
				armed = true
			}
		}
		arm()
	}
}

// relist lists the sandboxes again, keeping the usage sampled before for
// the ones still there.
func (m *Model) relist(ctx context.Context) {
	infos, err := m.o.Source.List(ctx)
	if err != nil {
		if ctx.Err() == nil {
			m.o.Log.Warn("list sandboxes", "err", err)
			m.publish(func(s *Snapshot) { s.Err = err })
		}
		return
	}
	prev := map[string]Row{}
	for _, r := range m.Snapshot().Rows {
		prev[r.ContainerID] = r
	}
	rows := make([]Row, len(infos))
	for i, info := range infos {
		rows[i] = Row{Info: info}
		if p, ok := prev[info.ContainerID]; ok {
			rows[i].Usage, rows[i].Sampled = p.Usage, p.Sampled
		}
	}
	m.publish(func(s *Snapshot) { s.Rows, s.Err = rows, nil })
}

// sample reads the usage of every running sandbox, concurrently.
func (m *Model) sample(ctx context.Context) {
	rows := append([]Row(nil), m.Snapshot().Rows...)
	var wg sync.WaitGroup
	for i := range rows {
		if rows[i].State != "running" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if u, err := m.o.Source.Usage(ctx, rows[i].ContainerID); err == nil {
				rows[i].Usage, rows[i].Sampled = u, time.Now()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return
	}
	m.publish(func(s *Snapshot) {
		// A list may have landed meanwhile: update the rows it kept.
		byID := map[string]Row{}
		for _, r := range rows {
			byID[r.ContainerID] = r
		}
		for i, r := range s.Rows {
			if u, ok := byID[r.ContainerID]; ok && !u.Sampled.IsZero() {
				s.Rows[i].Usage, s.Rows[i].Sampled = u.Usage, u.Sampled
			}
		}
	})
}

// publish changes the snapshot and tells OnChange.
func (m *Model) publish(f func(*Snapshot)) {
	m.mu.Lock()
	next := m.cur
	next.Rows = append([]Row(nil), m.cur.Rows...)
	f(&next)
	next.Updated = time.Now()
	m.cur = next
	m.mu.Unlock()
	if m.o.OnChange != nil {
		m.o.OnChange(next)
	}
}
