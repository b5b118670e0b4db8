package interp

import "golang.org/x/sync/semaphore"

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
