package pool

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// fakeEngine makes sandboxes of type string (their id), keyed by an image
// name, and records what it removed.
type fakeEngine struct {
	mu      sync.Mutex
	size    Sizes
	key     string
	paused  bool
	fail    bool
	n       int
	gone    map[string]bool // removed from outside: not running
	removed []string
}

func (f *fakeEngine) Wanted(context.Context) ([]Want[string, string], Sizes) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.paused {
		return nil, Sizes{}
	}
	return []Want[string, string]{{Language: "python", Key: f.key, Make: f.make}}, f.size
}

func (f *fakeEngine) make(ctx, soft context.Context) (Box[string], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.fail {
		return Box[string]{}, errors.New("no image")
	}
	f.n++
	id := fmt.Sprintf("sb%d", f.n)
	return Box[string]{Sandbox: id, ID: id, ContainerID: "c-" + id, Created: time.Now()}, nil
}

func (f *fakeEngine) Running(context.Context, []string) (map[string]bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	alive := map[string]bool{}
	for i := 1; i <= f.n; i++ {
		id := fmt.Sprintf("sb%d", i)
		alive["c-"+id] = !f.gone[id]
	}
	return alive, nil
}

func (f *fakeEngine) Remove(_ context.Context, sb string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.removed = append(f.removed, sb)
}

func (f *fakeEngine) set(edit func(*fakeEngine)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	edit(f)
}

func (f *fakeEngine) removedCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.removed)
}

// start runs a pool over f until the bubble's test ends.
func start(t *testing.T, f *fakeEngine) *Pool[string, string] {
	p := New(Options[string, string]{Engine: f, Tick: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); p.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done; p.Close(context.Background()) })
	synctest.Wait()
	return p
}

func TestPoolFillsClaimsAndRefills(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{size: Sizes{Size: 2, Most: 2}, key: "img"}
		p := start(t, f)
		if s := p.Stats("python"); s.Ready != 2 || s.Target != 2 || s.Made != 2 {
			t.Fatalf("after start: %+v, want 2 ready", s)
		}
		if _, ok := p.Claim("python", "other"); ok {
			t.Error("a claim with other settings was served")
		}
		a, ok1 := p.Claim("python", "img")
		b, ok2 := p.Claim("python", "img")
		if !ok1 || !ok2 || a == b {
			t.Fatalf("claims: %q %v, %q %v; want two distinct sandboxes", a, ok1, b, ok2)
		}
		synctest.Wait()
		if s := p.Stats("python"); s.Ready != 2 || s.Claimed != 2 || s.Made != 4 {
			t.Errorf("after two claims: %+v, want refilled to 2", s)
		}
	})
}

func TestPoolDropsStaleAndDrainsWhenPaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{size: Sizes{Size: 1, Most: 1}, key: "img"}
		p := start(t, f)
		f.set(func(f *fakeEngine) { f.gone = map[string]bool{"sb1": true} })
		time.Sleep(time.Second + time.Millisecond) // a tick checks what runs
		synctest.Wait()
		if f.removedCount() != 1 || p.Stats("python").Ready != 1 || p.Stats("python").Made != 2 {
			t.Errorf("a sandbox gone from outside: removed %v, %+v; want it replaced", f.removed, p.Stats("python"))
		}
		f.set(func(f *fakeEngine) { f.key = "img2" })
		p.Poke()
		synctest.Wait()
		if f.removedCount() != 2 || p.Stats("python").Made != 3 {
			t.Errorf("settings changed: removed %v, %+v; want the old one replaced", f.removed, p.Stats("python"))
		}
		f.set(func(f *fakeEngine) { f.paused = true })
		p.Poke()
		synctest.Wait()
		if f.removedCount() != 3 || p.Stats("python").Ready != 0 {
			t.Errorf("paused: removed %v, %+v; want drained", f.removed, p.Stats("python"))
		}
	})
}

func TestPoolGrowsInBurstAndShrinksWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{size: Sizes{Size: 1, Most: 3, Idle: 10 * time.Second}, key: "img"}
		p := start(t, f)
		for range 4 {
			p.Claim("python", "img")
		}
		synctest.Wait()
		if s := p.Stats("python"); s.Target != 3 || s.Ready != 3 {
			t.Fatalf("after a burst: %+v, want grown to 3", s)
		}
		time.Sleep(11 * time.Second)
		synctest.Wait()
		if s := p.Stats("python"); s.Target != 1 || s.Ready != 1 {
			t.Errorf("after idle: %+v, want shrunk to 1", s)
		}
	})
}

func TestPoolBacksOffAfterFailedFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{size: Sizes{Size: 1, Most: 1}, key: "img", fail: true}
		p := start(t, f)
		f.set(func(f *fakeEngine) { f.fail = false })
		p.Poke()
		synctest.Wait()
		if n := p.Stats("python").Ready; n != 0 {
			t.Errorf("refilled at once after a failure (%d ready); want a back-off", n)
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if n := p.Stats("python").Ready; n != 1 {
			t.Errorf("%d ready after the back-off, want 1", n)
		}
	})
}

func TestPoolCloseRemovesEverything(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := &fakeEngine{size: Sizes{Size: 3, Most: 3}, key: "img"}
		p := start(t, f)
		p.Close(context.Background())
		if f.removedCount() != 3 {
			t.Errorf("Close removed %v, want all 3", f.removed)
		}
		if _, ok := p.Claim("python", "img"); ok {
			t.Error("a closed pool served a claim")
		}
	})
}

// TestSizesOf: size and max_size are capped at 16 and by max_sandboxes,
// max_size below size is size, and size 0 turns bursts off too.
func TestSizesOf(t *testing.T) {
	for _, tc := range []struct {
		size, most, maxSandboxes int
		want                     Sizes
	}{
		{1, 8, 10, Sizes{Size: 1, Most: 8}},
		{40, 40, 100, Sizes{Size: 16, Most: 16}},
		{2, 8, 3, Sizes{Size: 2, Most: 3}},
		{4, 1, 10, Sizes{Size: 4, Most: 4}},
		{0, 8, 10, Sizes{}},
	} {
		cfg := config.Default()
		cfg.Pool.Size, cfg.Pool.MaxSize, cfg.Limits.MaxSandboxes, cfg.Pool.IdleSeconds = tc.size, tc.most, tc.maxSandboxes, 0
		if got := SizesOf(cfg); got != tc.want {
			t.Errorf("size %d, max_size %d, max_sandboxes %d: %+v, want %+v", tc.size, tc.most, tc.maxSandboxes, got, tc.want)
		}
	}
}
