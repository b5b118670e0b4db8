package memtrim

import (
	"context"
	"log/slog"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// Options tune Run; the zero value is what the server uses.
type Options struct {
	// Every is how often the heap is sampled (default 2 s).
	Every time.Duration
	// Quiet is the most that may be allocated between two samples for
	// the process to count as idle (default 256 KiB).
	Quiet uint64
	// MinReclaim is the least reclaimable heap (free but held, plus
	// garbage not yet collected) worth a collection (default 256 KiB).
	MinReclaim uint64
	// Log gets one debug line per release; nil logs nothing.
	Log *slog.Logger

	// sample, release and image replace the runtime and the system in
	// tests.
	sample  func() Sample
	release func()
	image   func() int64
}

// Sample is what a tick reads from the runtime.
type Sample struct {
	// Allocated is the total ever allocated on the heap.
	Allocated uint64
	// Free is heap memory that is free but not yet returned to the system.
	Free uint64
	// Garbage is heap memory held by objects that were not live at the
	// last collection or were allocated since and not yet collected: an
	// idle process that stopped short of its next collection holds it
	// for good.
	Garbage uint64
}

// reclaimable is what a collection and a release would hand back, at most.
func (s Sample) reclaimable() uint64 { return s.Free + s.Garbage }

// Run samples until ctx ends, releasing free heap after each quiet spell.
func Run(ctx context.Context, o Options) {
	t := newTrimmer(o)
	tick := time.NewTicker(t.o.Every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			t.tick()
		}
	}
}

type trimmer struct {
	o     Options
	last  uint64 // Allocated at the previous tick
	seen  bool   // last is set
	armed bool   // busy since the last release (or since the start)
}

func newTrimmer(o Options) *trimmer {
	if o.Every <= 0 {
		o.Every = 2 * time.Second
	}
	if o.Quiet == 0 {
		o.Quiet = 256 << 10
	}
	if o.MinReclaim == 0 {
		o.MinReclaim = 256 << 10
	}
	if o.sample == nil {
		o.sample = readSample()
	}
	if o.release == nil {
		o.release = debug.FreeOSMemory
	}
	if o.image == nil {
		o.image = dropImage
	}
	return &trimmer{o: o, armed: true}
}

// tick takes one sample and reports whether it released the heap (and,
// on Linux, the executable's resident code and read-only data: dropImage).
// It releases once per quiet spell: on the first tick that finds the process
// quiet (less than Quiet allocated since the previous one) after it was
// busy, if at least MinReclaim could be reclaimed. A process that only
// trickles allocations while quiet is not collected again and again.
func (t *trimmer) tick() bool {
	s := t.o.sample()
	quiet := t.seen && s.Allocated-t.last < t.o.Quiet
	t.last, t.seen = s.Allocated, true
	if !quiet {
		t.armed = true
		return false
	}
	if !t.armed || s.reclaimable() < t.o.MinReclaim {
		return false
	}
	t.o.release()
	image := t.o.image()
	t.armed = false
	after := t.o.sample()
	t.last = after.Allocated
	if t.o.Log != nil {
		t.o.Log.Debug("idle: free heap returned to the system", "reclaimable_kib", s.reclaimable()>>10, "held_after_kib", after.reclaimable()>>10, "image_kib", image)
	}
	return true
}

// readSample reads the two heap figures from runtime/metrics, reusing its
// sample slice so that sampling itself allocates nothing.
func readSample() func() Sample {
	ms := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	return func() Sample {
		metrics.Read(ms)
		objects, live := value(ms[2]), value(ms[3])
		return Sample{Allocated: value(ms[0]), Free: value(ms[1]), Garbage: objects - min(live, objects)}
	}
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}

// dropImage hands back the executable's resident code and read-only data
// (DropMapped): package inits, client-go's above all, touch most of them.
func dropImage() int64 { return DropMapped(Executable()) }
