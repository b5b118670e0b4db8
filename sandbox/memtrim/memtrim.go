// Package memtrim hands a long-running process's free heap back to the
// operating system once the process has gone quiet.
//
// Go's collector frees garbage, but the pages stay with the process until
// the background scavenger returns them, and it keeps about the heap goal
// (at least 4 MB) for the next burst. For the MCP server, which spends most
// of its life waiting for the next tool call, that is most of its heap:
// start-up leaves about 3 MB of freed pages behind a live heap of under
// 2 MB. Run watches the allocation rate and, after a quiet spell, collects
// once and releases every free page (debug.FreeOSMemory). A busy process
// is left alone; the next burst simply takes the pages again.
//
//	go memtrim.Run(ctx, memtrim.Options{Log: log})
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
	// MinFree is the least free, still held heap worth a collection
	// (default 1 MiB).
	MinFree uint64
	// Log gets one debug line per release; nil logs nothing.
	Log *slog.Logger

	// sample and release replace the runtime in tests.
	sample  func() Sample
	release func()
}

// Sample is what a tick reads from the runtime.
type Sample struct {
	// Allocated is the total ever allocated on the heap.
	Allocated uint64
	// Free is heap memory that is free but not yet returned to the system.
	Free uint64
}

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
	o    Options
	last uint64 // Allocated at the previous tick
	seen bool   // last is set
}

func newTrimmer(o Options) *trimmer {
	if o.Every <= 0 {
		o.Every = 2 * time.Second
	}
	if o.Quiet == 0 {
		o.Quiet = 256 << 10
	}
	if o.MinFree == 0 {
		o.MinFree = 1 << 20
	}
	if o.sample == nil {
		o.sample = readSample()
	}
	if o.release == nil {
		o.release = debug.FreeOSMemory
	}
	return &trimmer{o: o}
}

// tick takes one sample and releases the free heap when the process was
// quiet since the previous one and enough is held; it reports a release.
// A release allocates next to nothing, so the tick after it finds little
// free and does not repeat it until a burst has come and gone.
func (t *trimmer) tick() bool {
	s := t.o.sample()
	quiet := t.seen && s.Allocated-t.last < t.o.Quiet
	t.last, t.seen = s.Allocated, true
	if !quiet || s.Free < t.o.MinFree {
		return false
	}
	t.o.release()
	if t.o.Log != nil {
		after := t.o.sample()
		t.last = after.Allocated
		t.o.Log.Debug("idle: free heap returned to the system", "kib", (s.Free-min(after.Free, s.Free))>>10)
	}
	return true
}

// readSample reads the two heap figures from runtime/metrics, reusing its
// sample slice so that sampling itself allocates nothing.
func readSample() func() Sample {
	ms := []metrics.Sample{
		{Name: "/gc/heap/allocs:bytes"},
		{Name: "/memory/classes/heap/free:bytes"},
	}
	return func() Sample {
		metrics.Read(ms)
		return Sample{Allocated: value(ms[0]), Free: value(ms[1])}
	}
}

func value(s metrics.Sample) uint64 {
	if s.Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s.Value.Uint64()
}
