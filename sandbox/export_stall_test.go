package sandbox

import (
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
)

// SetStreamStallLimit sets how long a stream may stand still with its
// window full and returns a function that restores it: a test of the cut
// need not wait a minute.
func SetStreamStallLimit(d time.Duration) (restore func()) {
	return agentconn.SetStallLimit(d)
}
