package trayapp

import (
	"strings"
	"testing"
	"time"
)

// A quiet tray does no work for the idle release: its rechecks (the
// servers' questions and proposals, every askRecheck) find nothing new,
// and only a change the menu shows counts as work. A release after each
// recheck (a collection and a read of /proc/self/smaps, every 30 s) was
// most of an idle tray's CPU.
func TestQuietTrayDoesNotRelease(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden", "--debug")
	const line = "idle: free memory returned to the system"
	// Start-up's changes end in one release, idleRelease after the last.
	waitFor(t, "the release after start-up", time.Minute, func() bool { return strings.Contains(p.log(), line) })
	n := strings.Count(p.log(), line)
	time.Sleep(askRecheck + idleRelease + 5*time.Second)
	if got := strings.Count(p.log(), line) - n; got != 0 {
		t.Errorf("the quiet tray released its memory again (%d times); its log:\n%s", got, tail(p.log(), 8<<10))
	}
}
