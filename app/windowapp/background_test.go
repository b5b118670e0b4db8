//go:build cgo

package windowapp

import (
	"context"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// In the foreground nothing pauses the driver; in the background it is
// paused back to back, a round of its loop between pauses; the focus back
// ends the pauses, and so does the app's end.
func TestBackgroundHoldsOnlyInTheBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newBackground()
		ctx, cancel := context.WithCancel(context.Background())
		var pauses atomic.Int64
		done := make(chan struct{})
		go func() {
			defer close(done)
			b.hold(ctx, func() { pauses.Add(1); time.Sleep(backgroundPause) })
		}()
		time.Sleep(time.Minute)
		if n := pauses.Load(); n != 0 {
			t.Fatalf("%d pauses in the foreground", n)
		}
		b.set(true)
		time.Sleep(time.Second)
		synctest.Wait()
		// One pause and one gap a round: 1 s holds 9 of them, the tenth
		// under way.
		if n := pauses.Load(); n != 10 {
			t.Errorf("%d pauses in 1 s in the background, want 10", n)
		}
		b.set(false)
		time.Sleep(backgroundPause) // the pause under way ends
		n := pauses.Load()
		time.Sleep(time.Minute)
		if got := pauses.Load(); got != n {
			t.Errorf("%d pauses after the focus came back", got-n)
		}
		b.set(true)
		b.set(true) // a second report changes nothing
		time.Sleep(time.Second)
		cancel()
		<-done
	})
}
