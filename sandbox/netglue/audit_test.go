package netglue

import (
	"testing"
	"time"
)

// TestAuditBudget: a burst is written whole, then one line per interval;
// what is not written is counted once, by the next line written or by
// flush.
func TestAuditBudget(t *testing.T) {
	var b AuditBudget
	t0 := time.Unix(1e9, 0)
	for i := range auditBurst {
		if ok, d := b.Take(t0); !ok || d != 0 {
			t.Fatalf("line %d of the burst: ok=%v dropped=%d", i, ok, d)
		}
	}
	for range 1000 {
		if ok, _ := b.Take(t0.Add(time.Second)); ok {
			t.Fatal("a line past the burst was written within the interval")
		}
	}
	if ok, d := b.Take(t0.Add(auditEvery + time.Second)); !ok || d != 1000 {
		t.Fatalf("after the interval: ok=%v dropped=%d, want true 1000", ok, d)
	}
	if ok, _ := b.Take(t0.Add(auditEvery + 2*time.Second)); ok {
		t.Fatal("a second line in the same interval was written")
	}
	if d := b.Flush(); d != 1 {
		t.Fatalf("flush = %d, want 1", d)
	}
	if d := b.Flush(); d != 0 {
		t.Fatalf("a second flush = %d, want 0", d)
	}
	// A clock that goes back gives nothing extra.
	if ok, _ := b.Take(t0); ok {
		t.Fatal("a clock going back refilled the budget")
	}
}
