package output

import (
	"context"
	"fmt"
	"runtime"
	"sync"

	"golang.org/x/sync/semaphore"
)

// The server's memory budget for data that comes from sandboxes: a call
// takes its share before it buffers what a sandbox sends and waits (as
// long as its context lives) while others hold it, so parallel calls
// queue instead of adding up. A share is held until the answer made of
// the data is written: the transport gives each request a hold
// (WithMemHold) and gives the shares back once it wrote the answer; a
// caller without a hold gives them back when the engine call returns.

// DefaultMemBudget is the server-wide budget: one read of the largest
// size read_file answers with (memCost of 9 MiB) at a time, with room
// for small ones beside it.
const DefaultMemBudget = 64 << 20

// MemBudget is a server-wide budget of bytes that calls wait for.
type MemBudget struct {
	sem  *semaphore.Weighted
	size int64
}

// NewMemBudget returns a budget of n bytes (0: DefaultMemBudget).
func NewMemBudget(n int64) *MemBudget {
	if n <= 0 {
		n = DefaultMemBudget
	}
	return &MemBudget{sem: semaphore.NewWeighted(n), size: n}
}

// acquire waits for n bytes (at most the whole budget, so that one call
// larger than it still runs, alone) and returns their release, which may
// be called more than once.
func (b *MemBudget) acquire(ctx context.Context, n int64) (func(), error) {
	n = min(max(n, 1), b.size)
	if err := b.sem.Acquire(ctx, n); err != nil {
		return nil, fmt.Errorf("waiting for the server's memory budget (other calls are moving large data out of sandboxes): %w; try again, or ask for less at a time", err)
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			b.sem.Release(n)
			if n >= bigShare {
				// The garbage a large answer leaves (its data, encodings
				// and message) is collected now, not after the next one
				// has added its own.
				runtime.GC()
			}
		})
	}, nil
}

// bigShare is a share whose release collects garbage at once.
const bigShare = 16 << 20

// memCost is what buffering n bytes from a sandbox costs until the answer
// is written: the data as it grows, its base64 or text copy, the encoded
// message and the line the transport writes.
func memCost(n int64) int64 { return 6*n + 64<<10 }

type memHoldKey struct{}

// memHold keeps the shares a request took until its answer is written.
type memHold struct {
	mu       sync.Mutex
	releases []func()
	done     bool
}

// WithMemHold returns a context whose calls keep their memory budget
// shares until release is called (after the answer is written).
func WithMemHold(ctx context.Context) (_ context.Context, release func()) {
	h := &memHold{}
	return context.WithValue(ctx, memHoldKey{}, h), h.release
}

func (h *memHold) release() {
	h.mu.Lock()
	rs := h.releases
	h.releases, h.done = nil, true
	h.mu.Unlock()
	for _, r := range rs {
		r()
	}
}

// keep hands release to ctx's hold, if it has one that is still open,
// and returns what the caller must call when it is done with the data:
// nothing when the hold took it, else release itself.
func keep(ctx context.Context, release func()) func() {
	h, _ := ctx.Value(memHoldKey{}).(*memHold)
	if h == nil {
		return release
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.done {
		return release
	}
	h.releases = append(h.releases, release)
	return func() {}
}

// Take waits for the budget to buffer n bytes from a sandbox for ctx's
// request; the caller defers the returned func.
func (b *MemBudget) Take(ctx context.Context, n int64) (func(), error) {
	release, err := b.acquire(ctx, memCost(n))
	if err != nil {
		return nil, err
	}
	return keep(ctx, release), nil
}

// CarryMemHold gives ctx the hold from, if from has one (for transports
// whose handlers get a context of their own).
func CarryMemHold(ctx, from context.Context) context.Context {
	if h, ok := from.Value(memHoldKey{}).(*memHold); ok {
		return context.WithValue(ctx, memHoldKey{}, h)
	}
	return ctx
}
