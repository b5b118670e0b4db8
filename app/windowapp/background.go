//go:build cgo

package windowapp

import (
	"context"
	"sync"
	"time"
)

// Fyne's driver reads the window's events, runs its animations and draws
// what changed 60 times a second, whatever the window shows: about 2 % of
// a core on the 2-core test machine, as much as a bare Fyne window with
// one label. While none of the app's windows has the focus (the person is
// in another program), the window holds the driver's loop for
// backgroundPause at a time, then lets one round of it run
// (backgroundGap): about ten rounds a second. A change still shows within
// backgroundPause, and the first event of the person's coming back (the
// focus) ends the pauses.
const (
	backgroundPause = 100 * time.Millisecond
	backgroundGap   = time.Millisecond
)

// background says whether the app is in the background, as Fyne's
// lifecycle reports the focus: it starts in the foreground (no report
// yet: no pause).
type background struct {
	mu   sync.Mutex
	on   bool
	wake chan struct{} // closed and replaced when the app goes to the background
}

func newBackground() *background { return &background{wake: make(chan struct{})} }

// set records a lifecycle report: true when the app went to the
// background, false when one of its windows got the focus.
func (b *background) set(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if on && !b.on {
		close(b.wake)
		b.wake = make(chan struct{})
	}
	b.on = on
}

// state reports whether the app is in the background, and a channel
// closed when it next goes there.
func (b *background) state() (bool, <-chan struct{}) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.on, b.wake
}

// hold pauses the driver's loop through pause (which blocks it for
// backgroundPause) while the app is in the background, until ctx ends.
func (b *background) hold(ctx context.Context, pause func()) {
	for {
		on, wake := b.state()
		if !on {
			select {
			case <-ctx.Done():
				return
			case <-wake:
			}
			continue
		}
		pause()
		// A round of the loop (its events, animations and frame) runs
		// before the next pause is queued.
		select {
		case <-ctx.Done():
			return
		case <-time.After(backgroundGap):
		}
	}
}

// pauseDriver blocks Fyne's loop for backgroundPause and waits for the
// pause to end, or for ctx to (the app quits: a pause queued as Fyne
// stops is never run, and nothing may wait for it).
func (a *App) pauseDriver(ctx context.Context) {
	done := make(chan struct{})
	a.do(func() {
		time.Sleep(backgroundPause)
		close(done)
	})
	select {
	case <-done:
	case <-ctx.Done():
	}
}
