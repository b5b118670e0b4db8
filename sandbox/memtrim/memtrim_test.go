package memtrim

import (
	"runtime"
	"runtime/metrics"
	"testing"
	"time"
)

// TestTickReleasesOnlyAfterQuietSpell walks the decision through a run of
// samples: nothing on the first tick (no rate yet) or while busy, one
// release per quiet spell and only when enough can be reclaimed.
func TestTickReleasesOnlyAfterQuietSpell(t *testing.T) {
	const mib, kib = 1 << 20, 1 << 10
	steps := []struct {
		name    string
		sample  Sample
		release bool
	}{
		{"first sample: no rate yet", Sample{Allocated: 10 * mib, Free: 3 * mib}, false},
		{"busy: 4 MiB allocated since", Sample{Allocated: 14 * mib, Free: 3 * mib}, false},
		{"quiet with 3 MiB held", Sample{Allocated: 14*mib + 100*kib, Free: 3 * mib}, true},
		{"still quiet: not again in the same spell", Sample{Allocated: 14*mib + 110*kib, Free: 2 * mib}, false},
		{"trickling under the quiet bound is the same spell", Sample{Allocated: 14*mib + 360*kib, Free: 2 * mib, Garbage: mib}, false},
		{"burst", Sample{Allocated: 30 * mib, Free: 5 * mib}, false},
		{"quiet again", Sample{Allocated: 30 * mib, Free: 5 * mib}, true},
		{"at the quiet bound counts as busy", Sample{Allocated: 30*mib + 256*kib, Free: 4 * mib}, false},
		{"quiet, little free, but garbage not yet collected", Sample{Allocated: 30*mib + 300*kib, Free: 100 * kib, Garbage: 2 * mib}, true},
		{"busy once more", Sample{Allocated: 40 * mib}, false},
		{"quiet, but free and garbage just under MinReclaim", Sample{Allocated: 40 * mib, Free: 128 * kib, Garbage: 128*kib - 1}, false},
		{"still the same spell, and now enough", Sample{Allocated: 40*mib + 10*kib, Free: 128 * kib, Garbage: 128 * kib}, true},
	}
	var cur Sample
	released := 0
	tr := newTrimmer(Options{sample: func() Sample { return cur }, release: func() { released++ }, image: func() int64 { return 0 }})
	for _, s := range steps {
		cur = s.sample
		before := released
		got := tr.tick()
		if got != s.release || released-before != map[bool]int{true: 1}[s.release] {
			t.Fatalf("%s: tick = %v with %d releases, want %v", s.name, got, released-before, s.release)
		}
	}
}

// TestTickDropsImageAgain: what a quiet spell runs now and then (the warm
// pool shrinking, usage sampling, the forced collection) faults the
// executable's pages back in. The tick after a release drops them once
// more; the first quiet tick after a drop is the baseline; a quiet tick
// at least ImageEvery after the drop that finds MinImage more drops them
// again, without a collection.
func TestTickDropsImageAgain(t *testing.T) {
	const mib, kib = 1 << 20, 1 << 10
	steps := []struct {
		name           string
		sample         Sample
		release, image int // collections and drops of the image this tick
	}{
		{"first sample", Sample{Allocated: 10 * mib, File: 20 * mib}, 0, 0},
		{"quiet: heap and image released", Sample{Allocated: 10 * mib, Free: 3 * mib, File: 20 * mib}, 1, 1},
		{"the tick after: image alone, what the release faulted in", Sample{Allocated: 10 * mib, File: 6 * mib}, 0, 1},
		{"baseline: the first quiet tick after the drop", Sample{Allocated: 10 * mib, File: 4 * mib}, 0, 0},
		{"MinImage more, but too soon after the drop", Sample{Allocated: 10*mib + 10*kib, File: 5 * mib}, 0, 0},
		{"ImageEvery since the drop, less than MinImage more", Sample{Allocated: 10*mib + 10*kib, File: 5*mib - kib}, 0, 0},
		{"MinImage more: image alone", Sample{Allocated: 10*mib + 20*kib, File: 5 * mib}, 0, 1},
		{"new baseline", Sample{Allocated: 10*mib + 20*kib, File: 4 * mib}, 0, 0},
		{"busy: left alone", Sample{Allocated: 20 * mib, File: 9 * mib}, 0, 0},
		{"quiet after busy, too little to collect: image alone", Sample{Allocated: 20 * mib, Free: 100 * kib, File: 9 * mib}, 0, 1},
		{"baseline", Sample{Allocated: 20 * mib, File: 4 * mib}, 0, 0},
		{"steady", Sample{Allocated: 20 * mib, File: 4*mib + 512*kib}, 0, 0},
		{"steady", Sample{Allocated: 20 * mib, File: 4*mib + 512*kib}, 0, 0},
		{"steady", Sample{Allocated: 20 * mib, File: 4*mib + 512*kib}, 0, 0},
	}
	var cur Sample
	released, dropped := 0, 0
	tr := newTrimmer(Options{
		Every: time.Second, ImageEvery: 3 * time.Second,
		sample:  func() Sample { return cur },
		release: func() { released++ },
		// A drop leaves 1 MiB resident, as the tick's next sample reads.
		image: func() int64 { dropped++; cur.File = mib; return 0 },
	})
	for _, s := range steps {
		cur = s.sample
		r0, d0 := released, dropped
		got := tr.tick()
		if r, d := released-r0, dropped-d0; r != s.release || d != s.image || got != (r > 0) {
			t.Fatalf("%s: tick = %v with %d releases and %d drops of the image, want %d and %d", s.name, got, r, d, s.release, s.image)
		}
	}
}

// TestTickReturnsHeapToTheSystem uses the real runtime: 16 MiB of garbage
// is collected but held; a quiet tick hands it back at once, which the
// background scavenger does only slowly and never below the heap goal.
func TestTickReturnsHeapToTheSystem(t *testing.T) {
	tr := newTrimmer(Options{})
	tr.tick() // the first sample sets the rate's origin
	garbage := make([][]byte, 0, 256)
	for range 256 {
		garbage = append(garbage, make([]byte, 64<<10))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	// What was released is counted from before the collection: the
	// background scavenger may return part of the garbage at any time,
	// between the check below and the tick too.
	released0 := releasedBytes()
	runtime.GC()
	held := readSample()().Free
	if held < 8<<20 {
		t.Skipf("only %d KiB free and held after the collection: the scavenger was faster than this test", held>>10)
	}
	tr.last = readSample()().Allocated // quiet since "the previous tick"
	if !tr.tick() {
		t.Fatalf("quiet tick with %d KiB held did not release", held>>10)
	}
	// Not all of it: the runtime's own work after the release (the tick
	// reads the process's maps and statm) may leave a little free (up to
	// 2 MiB seen).
	if free := readSample()().Free; free >= held/4 {
		t.Errorf("after the release %d KiB are still free and held (was %d KiB)", free>>10, held>>10)
	}
	if got := releasedBytes() - released0; got < 8<<20 {
		t.Errorf("released %d KiB to the system since the collection, want at least 8 MiB", got>>10)
	}
}

// TestTickCollectsIdleGarbage: a process that goes quiet short of its next
// collection holds its garbage for good (nothing allocates, so nothing
// triggers the collector) and the garbage is not free heap. A quiet tick
// counts it, collects it and hands the pages back.
func TestTickCollectsIdleGarbage(t *testing.T) {
	tr := newTrimmer(Options{})
	runtime.GC()
	cycles := gcCycles()
	garbage := make([][]byte, 0, 48)
	for range 48 {
		garbage = append(garbage, make([]byte, 64<<10))
	}
	runtime.KeepAlive(garbage)
	garbage = nil
	s := readSample()()
	if gcCycles() != cycles {
		t.Skip("a collection ran while the garbage was made")
	}
	if s.Garbage < 2<<20 {
		t.Fatalf("3 MiB of uncollected garbage sampled as %d KiB (free %d KiB)", s.Garbage>>10, s.Free>>10)
	}
	released0 := releasedBytes()
	tr.last, tr.seen = readSample()().Allocated, true // quiet since "the previous tick"
	if !tr.tick() {
		t.Fatalf("quiet tick with %d KiB of garbage did not release", s.Garbage>>10)
	}
	// What is reclaimable afterwards must have gone down by most of the
	// garbage. Not to zero: on a loaded machine the runtime's own
	// background work frees a little more meanwhile (CI saw 1.7 MiB).
	if after := readSample()(); after.reclaimable() > s.reclaimable()-s.Garbage/2 {
		t.Errorf("after the release %d KiB are still reclaimable (%d KiB before)", after.reclaimable()>>10, s.reclaimable()>>10)
	}
	if got := releasedBytes() - released0; got < 2<<20 {
		t.Errorf("released %d KiB to the system, want at least 2 MiB", got>>10)
	}
}

func gcCycles() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/total:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func releasedBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
