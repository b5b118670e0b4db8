package sandbox

import (
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Figures are the only output of a sandbox that the server keeps whole
// (everything else is cut to limits.output_bytes as it arrives): each run
// may keep limits.image_bytes of them, and all runs at once together at
// most the server's figure budget (interp.Budget), so that concurrent
// calls cannot add up past it. A figure that does not fit either budget is
// read past, never buffered, and the result says it was dropped.

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
