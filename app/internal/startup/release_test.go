package startup

import (
	"sync/atomic"
	"testing"
	"time"
)

var sink [][]byte

// TestReleaser: touched in a burst, a releaser releases once, after the
// burst has settled, and then the freed heap is back with the system.
func TestReleaser(t *testing.T) {
	var extra atomic.Int32
	r := NewReleaser(300*time.Millisecond, func() { extra.Add(1) }, nil)
	defer r.Stop()
	for i := 0; i < 64; i++ {
		sink = append(sink, make([]byte, 256<<10)) // 16 MiB, then garbage
	}
	sink = nil
	before := heapHeld()
	for i := 0; i < 5; i++ {
		r.Touch()
		time.Sleep(100 * time.Millisecond)
	}
	if n := extra.Load(); n != 0 {
		t.Fatalf("released %d times while touched", n)
	}
	deadline := time.Now().Add(10 * time.Second)
	for extra.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if n := extra.Load(); n != 1 {
		t.Fatalf("released %d times after the burst, want once", n)
	}
	if after := heapHeld(); after+12<<20 > before {
		t.Errorf("Go held %d MiB of heap before the release and %d MiB after, want 12 MiB less", before>>20, after>>20)
	}
}
