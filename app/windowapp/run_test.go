//go:build cgo

package windowapp

import (
	"testing"
	"time"

	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/test"
)

type stopHook interface{ OnStopped() func() }

// Fyne 2.7 queues a hook as its loop stops, and running it races the
// loop's own end (a panic in CI: send on closed channel). The window's
// app has none to queue; a Fyne that no longer has the hook fails this
// test, so that the work-around goes with it.
func TestFyneAppQueuesNothingAsItStops(t *testing.T) {
	bare, ok := fyneapp.NewWithID(AppID + ".test").Lifecycle().(stopHook)
	if !ok {
		t.Fatal("Fyne's lifecycle has no OnStopped any more: see whether newFyneApp's work-around is still needed")
	}
	if bare.OnStopped() == nil {
		t.Fatal("a bare Fyne app has no stopped hook any more: see whether newFyneApp's work-around is still needed")
	}
	if f := newFyneApp().Lifecycle().(stopHook).OnStopped(); f != nil {
		t.Fatal("the window's Fyne app still has a stopped hook to queue as it stops")
	}
}

// Closing the hand-offs waits for the one under way and stops the next;
// a hand-off made inside another (Fyne runs one in place once it has
// stopped) goes through.
func TestHandoffsClose(t *testing.T) {
	test.NewTempApp(t)
	a := &App{}
	ran := make(chan struct{}, 1)
	a.do(func() { a.do(func() {}); ran <- struct{}{} })
	<-ran
	if !a.handoff.begin() {
		t.Fatal("no hand-off before close")
	}
	closed := make(chan bool)
	go func() { closed <- a.handoff.close(true) }()
	select {
	case <-closed:
		t.Fatal("close did not wait for the hand-off under way")
	case <-time.After(50 * time.Millisecond):
	}
	a.handoff.end()
	if !<-closed {
		t.Error("the first close says it did not close")
	}
	a.do(func() { t.Error("handed to Fyne after close") })
	if a.handoff.close(false) {
		t.Error("a second close says it closed")
	}
}
