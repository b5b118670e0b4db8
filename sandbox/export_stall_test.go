package sandbox

import "time"

// SetStreamStallLimit sets how long a stream may stand still with its
// window full (streamStallLimit in production) and returns a function that
// restores it: a test of the cut need not wait a minute.
func SetStreamStallLimit(d time.Duration) (restore func()) {
	old := stallNanos.Swap(int64(d))
	return func() { stallNanos.Store(old) }
}
