package startup

import (
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// Releaser hands a GUI process's free memory back to the system once it
// has gone quiet after some work. Go keeps the pages its collector freed
// for the next burst (the window: about 20 MB after a few tabs were
// shown), and C's malloc keeps what the GL driver freed; a process that
// then waits for hours holds both. Unlike a periodic check it arms a timer
// only when told of work (Touch), so an idle process is not woken up.
type Releaser struct {
	settle time.Duration
	extra  func() // also releases, after Go's heap (the C heap's trim)
	log    *slog.Logger

	mu    sync.Mutex
	timer *time.Timer
}

// NewReleaser returns a releaser that releases settle after the last
// Touch, then runs extra (nil: nothing more).
func NewReleaser(settle time.Duration, extra func(), log *slog.Logger) *Releaser {
	return &Releaser{settle: settle, extra: extra, log: log}
}

// Touch says work happened: the release waits until settle has passed
// without another Touch. A nil Releaser does nothing.
func (r *Releaser) Touch() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer == nil {
		r.timer = time.AfterFunc(r.settle, r.release)
		return
	}
	r.timer.Reset(r.settle)
}

// Stop cancels a pending release.
func (r *Releaser) Stop() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
	}
}

func (r *Releaser) release() {
	before := heapHeld()
	debug.FreeOSMemory()
	if r.extra != nil {
		r.extra()
	}
	if r.log != nil {
		r.log.Debug("idle: free memory returned to the system", "go_heap_held_kib_before", before>>10, "after", heapHeld()>>10)
	}
}

// heapHeld is the heap memory Go holds from the system: objects and free
// pages not yet returned.
func heapHeld() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/unused:bytes"}}
	metrics.Read(s)
	var n uint64
	for _, v := range s {
		if v.Value.Kind() == metrics.KindUint64 {
			n += v.Value.Uint64()
		}
	}
	return n
}
