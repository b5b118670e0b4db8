package sandbox

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// callLock lets one call at a time into a part of a sandbox (an
// interpreter, the installs), and tells a call that has to wait what it
// waits for: a second call to a busy sandbox would otherwise wait in
// silence. Its zero value is ready to use.
type callLock struct {
	mu     sync.Mutex
	sem    chan struct{} // holds a token while the lock is held
	holder string        // what holds it, as a notice names it
	since  time.Time
}

// busyNoticeEvery is how often a waiting call hears again what it waits for.
const busyNoticeEvery = 5 * time.Second

// Holders, as a waiting call's notice names them.
const (
	holderCall      = "the previous call"
	holderInterpUp  = "the interpreter's start"
	holderInstaller = "the previous install"
)

func (l *callLock) ch() chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.sem == nil {
		l.sem = make(chan struct{}, 1)
	}
	return l.sem
}

// acquire takes l for holder, or gives up when ctx ends. A call that must
// wait tells waiting (when set) at once, then every busyNoticeEvery. No
// timeout of the call runs while it waits: its callers start theirs once
// they hold the lock.
func (l *callLock) acquire(ctx context.Context, holder string, waiting func(string)) error {
	sem := l.ch()
	select {
	case sem <- struct{}{}:
		l.hold(holder)
		return nil
	default:
	}
	var tick <-chan time.Time
	if waiting != nil {
		waiting(l.notice())
		t := time.NewTicker(busyNoticeEvery)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case sem <- struct{}{}:
			l.hold(holder)
			return nil
		case <-tick:
			waiting(l.notice())
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

func (l *callLock) hold(holder string) {
	l.mu.Lock()
	l.holder, l.since = holder, time.Now()
	l.mu.Unlock()
}

// release gives l back.
func (l *callLock) release() { <-l.ch() }

// notice says what a waiting call waits for.
func (l *callLock) notice() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return fmt.Sprintf("waiting for %s in this sandbox, running %d s", l.holder, int(time.Since(l.since).Seconds()))
}
