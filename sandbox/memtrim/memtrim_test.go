package memtrim

import (
	"runtime"
	"runtime/metrics"
	"testing"
)

// TestTickReleasesOnlyAfterQuietSpell walks the decision through a run of
// samples: nothing on the first tick (no rate yet), nothing while busy or
// when little is held, one release per quiet spell.
func TestTickReleasesOnlyAfterQuietSpell(t *testing.T) {
	const mib = 1 << 20
	steps := []struct {
		name    string
		sample  Sample
		release bool
	}{
		{"first sample: no rate yet", Sample{Allocated: 10 * mib, Free: 3 * mib}, false},
		{"busy: 4 MiB allocated since", Sample{Allocated: 14 * mib, Free: 3 * mib}, false},
		{"quiet with 3 MiB held", Sample{Allocated: 14*mib + 100<<10, Free: 3 * mib}, true},
		{"quiet, little held after the release", Sample{Allocated: 14*mib + 110<<10, Free: 200 << 10}, false},
		{"burst", Sample{Allocated: 30 * mib, Free: 5 * mib}, false},
		{"quiet again", Sample{Allocated: 30 * mib, Free: 5 * mib}, true},
		{"just under the quiet bound, but held under MinFree", Sample{Allocated: 30*mib + 255<<10, Free: mib - 1}, false},
		{"at the quiet bound counts as busy", Sample{Allocated: 30*mib + 511<<10, Free: 4 * mib}, false},
	}
	var cur Sample
	released := 0
	tr := newTrimmer(Options{sample: func() Sample { return cur }, release: func() { released++ }})
	for _, s := range steps {
		cur = s.sample
		before := released
		got := tr.tick()
		if got != s.release || released-before != map[bool]int{true: 1}[s.release] {
			t.Fatalf("%s: tick = %v with %d releases, want %v", s.name, got, released-before, s.release)
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
	runtime.GC()
	held := readSample()().Free
	if held < 8<<20 {
		t.Skipf("only %d KiB free and held after the collection: the scavenger was faster than this test", held>>10)
	}
	released0 := releasedBytes()
	tr.last = readSample()().Allocated // quiet since "the previous tick"
	if !tr.tick() {
		t.Fatalf("quiet tick with %d KiB held did not release", held>>10)
	}
	if free := readSample()().Free; free >= 1<<20 {
		t.Errorf("after the release %d KiB are still free and held (was %d KiB)", free>>10, held>>10)
	}
	if got := releasedBytes() - released0; got < 8<<20 {
		t.Errorf("released %d KiB to the system, want at least 8 MiB", got>>10)
	}
}

func releasedBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
