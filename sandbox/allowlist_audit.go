package sandbox

import (
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// The audit lines one sandbox's network may write: a burst, then one per
// interval. A program that opens connections as fast as it can would
// otherwise fill the audit log (which keeps a bounded size) and push the
// record of every tool call out of it. What is not written is counted,
// and the next line written, or a last one when the sandbox's proxy
// closes, says how many; sandbox_list's counters count everything.
const (
	networkAuditBurst = 64
	networkAuditEvery = 10 * time.Second
)

// auditBudget is one sandbox's allowance of network audit lines: a token
// bucket (golang.org/x/time/rate) and a count of the lines it refused. Its
// zero value is ready to use.
type auditBudget struct {
	mu      sync.Mutex
	lim     *rate.Limiter
	dropped int
}

// take reports whether a line may be written at now and, if so, how many
// were not written since the last one that was. A clock that goes back
// refills nothing.
func (b *auditBudget) take(now time.Time) (ok bool, dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lim == nil {
		b.lim = rate.NewLimiter(rate.Every(networkAuditEvery), networkAuditBurst)
	}
	if !b.lim.AllowN(now, 1) {
		b.dropped++
		return false, 0
	}
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// flush returns how many lines were not written and forgets them.
func (b *auditBudget) flush() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dropped
	b.dropped = 0
	return d
}
