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
	// MinImage is the least growth of the process's resident file pages
	// since the first quiet tick after the executable's were last dropped
	// worth dropping them again (default 1 MiB), and ImageEvery the least
	// time between two such drops (default 30 s): see tick.
	MinImage   uint64
	ImageEvery time.Duration
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
	// File is the process's resident file pages (on Linux: statm's
	// shared), the executable's above all; 0 where unknown.
	File uint64
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
	// settle: the image is to be dropped on the next quiet tick (a
	// release just ran).
	settle bool
	file   uint64 // Sample.File on the first quiet tick after the last drop
	based  bool   // file is set
	since  int    // ticks since the last drop
	every  int    // ImageEvery in ticks
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
	if o.MinImage == 0 {
		o.MinImage = 1 << 20
	}
	if o.ImageEvery <= 0 {
		o.ImageEvery = 30 * time.Second
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
	return &trimmer{o: o, armed: true, every: int((o.ImageEvery + o.Every - 1) / o.Every)}
}

// tick takes one sample and reports whether it released the heap (and,
// on Linux, the executable's resident code and read-only data: dropImage).
// It releases once per quiet spell: on
// the first tick that finds the process quiet (less than Quiet allocated
// since the previous one) after it was busy, if at least MinReclaim could
// be reclaimed. A process that only trickles allocations while quiet is
// not collected again and again.
//
// The image alone, which costs no collection, is dropped again on the
// quiet tick after a release (what the release itself faulted back in),
// and on a quiet tick at least ImageEvery after the last drop that finds
// MinImage more file pages resident than the first quiet tick after that
// drop did: what a quiet process runs now and then (the warm pool
// shrinking, usage sampling of a live sandbox, the forced collection every
// 2 minutes) faults pages back in, 64 KiB around each one touched. Not
// more often: a drop costs a read of smaps and the faults that follow it.
func (t *trimmer) tick() bool {
	s := t.o.sample()
	quiet := t.seen && s.Allocated-t.last < t.o.Quiet
	t.last, t.seen = s.Allocated, true
	t.since++
	if !quiet {
		t.armed = true
		return false
	}
	switch {
	case t.armed && s.reclaimable() >= t.o.MinReclaim:
		t.release(s)
		t.settle, t.based, t.since = true, false, 0
		return true
	case t.settle || t.based && t.since >= t.every && s.File >= t.file+t.o.MinImage:
		t.redrop(s)
		t.settle, t.based, t.since = false, false, 0
	case !t.based:
		t.file, t.based = s.File, true
	}
	return false
}

// release collects, returns the free heap and drops the image.
func (t *trimmer) release(s Sample) {
	t.o.release()
	image := t.o.image()
	t.armed = false
	after := t.o.sample()
	t.last = after.Allocated
	if t.o.Log != nil {
		t.o.Log.Debug("idle: free heap returned to the system", "reclaimable_kib", s.reclaimable()>>10, "held_after_kib", after.reclaimable()>>10, "image_kib", image)
	}
}

// redrop drops the image again, without a collection.
func (t *trimmer) redrop(s Sample) {
	image := t.o.image()
	after := t.o.sample()
	t.last = after.Allocated
	if t.o.Log != nil {
		t.o.Log.Debug("idle: executable's pages returned again", "file_kib", s.File>>10, "file_after_kib", after.File>>10, "image_kib", image)
	}
}

// readSample reads the heap figures from runtime/metrics, reusing its
// sample slice so that sampling itself allocates nothing, and the resident
// file pages (residentFile).
func readSample() func() Sample {
	ms := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}
	file := residentFile()
	return func() Sample {
		metrics.Read(ms)
		objects, live := value(ms[2]), value(ms[3])
		return Sample{Allocated: value(ms[0]), Free: value(ms[1]), Garbage: objects - min(live, objects), File: file()}
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
