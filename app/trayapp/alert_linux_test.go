package trayapp

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Failed calls in the audit log (an error, a timeout, an OOM kill) raise
// a badge on the tray icon and the count in its title, with one
// notification for the burst, not one per call; the window marking the
// activity seen clears both. Calls that succeeded raise nothing, nor do
// the window's Test runs.
func TestFailedCallsBadge(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the tray's icon", 30*time.Second, func() bool { v, _ := m.itemProp("IconPixmap"); return v != nil })
	// The health check that follows the first look badges the icon when
	// something keeps code from running: the plain icon is read once it
	// has said, and it must have said nothing.
	waitFor(t, "the tray's first health check", 90*time.Second, func() bool { return strings.Contains(p.log(), "health: ") })
	if strings.Contains(p.log(), "health: needs attention") {
		t.Fatalf("the test engine needs attention:\n%s", p.log())
	}
	time.Sleep(time.Second) // the watch starts after the menu
	plain, _ := m.itemProp("IconPixmap")
	code := 0
	calls := []state.AuditEntry{
		{Tool: "run_code", Client: "claude-ai", ExitCode: &code, Summary: "print(1)"},
		{Tool: "run_code", Client: "claude-ai", Error: true, Summary: "\x1b]8;;evil\x07 boom"},
		{Tool: "exec", Client: "cursor-vscode", TimedOut: true},
		{Tool: "run_code", Client: "claude-ai", OOMKilled: true},
		// The window's own Test is no client's failure.
		{Tool: "run_code", Client: bundled.TestClientName, Error: true},
	}
	for _, e := range calls {
		if err := st.Audit(e); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the title to count 3 failed calls", 15*time.Second, func() bool {
		v, _ := m.itemProp("Title")
		s, _ := v.(string)
		return strings.HasSuffix(s, " · 3 calls failed")
	})
	note := d.waitNote(t, "one notification for the burst", "A run_code call from Claude", "failed", "Activity")
	if strings.Contains(note, "boom") || strings.Contains(note, "evil") {
		t.Errorf("the notification %q carries what a client or sandbox wrote", note)
	}
	badged, _ := m.itemProp("IconPixmap")
	if reflect.DeepEqual(plain, badged) {
		t.Error("the icon has no badge after failed calls")
	}
	time.Sleep(time.Second) // a second notification would have come by now
	if v, _ := m.itemProp("Title"); !strings.HasSuffix(v.(string), " · 3 calls failed") {
		t.Errorf("title %q: the window's Test counted as a client's failure", v)
	}
	n := 0
	for _, s := range d.notes.all() {
		if strings.Contains(s, "call") && strings.Contains(s, "Activity") {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d notifications for one burst of failures, want 1: %q", n, d.notes.all())
	}

	if err := traywin.MarkActivitySeen(st.Dir()); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		v, _ := m.itemProp("IconPixmap")
		title, _ := m.itemProp("Title")
		if reflect.DeepEqual(v, plain) && !strings.Contains(title.(string), "failed") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the badge did not clear within 15 s once the activity was seen: title %q\ntray log:\n%s", title, p.log())
		}
		time.Sleep(100 * time.Millisecond)
	}
	p.stop(t)
}
