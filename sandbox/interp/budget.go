package interp

import "golang.org/x/sync/semaphore"

// Figures are the only output of a sandbox that the server keeps whole
// (everything else is cut to limits.output_bytes as it arrives): each run
// may keep limits.image_bytes of them, and all runs at once together at
// most the server's figure budget, so that concurrent calls cannot add up
// past it. A figure that does not fit either budget is read past, never
// buffered, and the result says it was dropped.

// minBudget is the least server-wide figure budget.
const minBudget = 16 << 20

// BudgetFor is the server-wide figure budget for limits.image_bytes:
// four runs' worth, at least 16 MiB.
func BudgetFor(imageBytes int) int64 {
	return max(4*int64(imageBytes), minBudget)
}

// Budget is a server-wide budget of buffered figure bytes, shared by every
// run at once. Taking never blocks: a run that cannot get budget drops the
// figure and its result says so.
type Budget struct {
	sem *semaphore.Weighted
}

// NewBudget returns a budget of n bytes.
func NewBudget(n int64) *Budget {
	return &Budget{sem: semaphore.NewWeighted(n)}
}

// take reserves n bytes, or reports that they are not free now.
func (b *Budget) take(n int) bool {
	return n == 0 || b.sem.TryAcquire(int64(n))
}

// give returns n bytes taken earlier.
func (b *Budget) give(n int) {
	if n > 0 {
		b.sem.Release(int64(n))
	}
}
