package output

import "golang.org/x/sync/semaphore"

// Figures are the only output of a sandbox that the server keeps whole
// (everything else is cut to limits.output_bytes as it arrives): each run
// may keep limits.image_bytes of them, and all runs at once together at
// most the server's figure budget, so that concurrent calls cannot add up
// past it. A figure that does not fit either budget is read past, never
// buffered, and the result says it was dropped.

// minFigureBudget is the least server-wide figure budget.
const minFigureBudget = 16 << 20

// FigureBudgetFor is the server-wide figure budget for limits.image_bytes
// of imageBytes: four calls' worth, at least minFigureBudget.
func FigureBudgetFor(imageBytes int) int64 {
	return max(4*int64(imageBytes), minFigureBudget)
}

// FigureBudget is a server-wide budget of buffered bytes. Taking never
// blocks: a call that cannot get budget drops what it would have kept.
type FigureBudget struct {
	sem *semaphore.Weighted
}

// NewFigureBudget returns a budget of n bytes.
func NewFigureBudget(n int64) *FigureBudget {
	return &FigureBudget{sem: semaphore.NewWeighted(n)}
}

// Take reserves n bytes, or reports that they are not free now.
func (b *FigureBudget) Take(n int) bool {
	return n == 0 || b.sem.TryAcquire(int64(n))
}

// Give returns n bytes taken earlier.
func (b *FigureBudget) Give(n int) {
	if n > 0 {
		b.sem.Release(int64(n))
	}
}
