package sandbox

import (
	"golang.org/x/sync/semaphore"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Figures are the only output of a sandbox that the server keeps whole
// (everything else is cut to limits.output_bytes as it arrives): each run
// may keep limits.image_bytes of them, and all runs at once together at
// most the server's figure budget, so that concurrent calls cannot add up
// past it. A figure that does not fit either budget is read past, never
// buffered, and the result says it was dropped.

// minFigureBudget is the least server-wide figure budget.
const minFigureBudget = 16 << 20

// figureBudgetFor is the server-wide figure budget for a configuration:
// four calls' worth of limits.image_bytes, at least minFigureBudget.
func figureBudgetFor(cfg *config.Config) int64 {
	n := int64(4 * config.Default().Limits.ImageBytes)
	if cfg != nil {
		n = 4 * int64(cfg.Limits.ImageBytes)
	}
	return max(n, minFigureBudget)
}

// byteBudget is a server-wide budget of buffered bytes. Taking never
// blocks: a call that cannot get budget drops what it would have kept.
type byteBudget struct {
	sem *semaphore.Weighted
}

func newByteBudget(n int64) *byteBudget {
	return &byteBudget{sem: semaphore.NewWeighted(n)}
}

// take reserves n bytes, or reports that they are not free now.
func (b *byteBudget) take(n int) bool {
	return n == 0 || b.sem.TryAcquire(int64(n))
}

// give returns n bytes taken earlier.
func (b *byteBudget) give(n int) {
	if n > 0 {
		b.sem.Release(int64(n))
	}
}
