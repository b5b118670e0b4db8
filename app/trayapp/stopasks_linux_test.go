package trayapp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// In the real window (Xvfb, 800×560), a row's Stop asks before it acts:
// the click leaves the sandbox running and shows the question (screenshot
// stop-asks-800x560); Space presses the default, Cancel, which stops
// nothing; the question's Stop button stops it.
func TestWindowRowStopAsks(t *testing.T) {
	skipUnderRace(t)
	needXdotool(t)
	engine := apptest.Docker(t, apptest.PythonImage)
	defer engine.Close()
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	server := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), "mcp-sandbox")
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, ClientName: "stop-test", Getenv: func(k string) string {
		if k == "HOME" {
			return p.home
		}
		return os.Getenv(k)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	id := mustCreate(t, s)
	running := func() bool {
		ids, err := apptest.Sandboxes(ctx, engine)
		return err == nil && slices.ContainsFunc(ids, func(c string) bool { return strings.Contains(c, id) })
	}

	wp := startWindow(t, d, p, nil, "--tab", ui.TabSandboxes, "--size", "800x560")
	waitFor(t, "the window to count the sandbox", 90*time.Second, func() bool {
		return strings.HasSuffix(p.windowHeadline(), "· 1 sandbox")
	})
	time.Sleep(2 * time.Second) // the table drawn
	if err := p.clickAt(stopX, stopY); err != nil {
		t.Fatal(err)
	}
	time.Sleep(3 * time.Second)
	windowShown(t, wp, "stop-asks-800x560")
	if !running() {
		t.Fatal("a row's Stop stopped the sandbox without asking")
	}
	if _, err := p.xdo("key", "space"); err != nil { // the default: Cancel
		t.Fatal(err)
	}
	time.Sleep(2 * time.Second)
	if !running() {
		t.Fatal("the question's default stopped the sandbox")
	}
	p.clickAt(stopX, stopY)
	time.Sleep(2 * time.Second)
	p.clickAt(verbX, verbY)
	waitFor(t, "the question's Stop to stop the sandbox", 60*time.Second, func() bool { return !running() })
	wp.endWindow(t)
}

// Where the first row's Stop button and the question's Stop button are
// drawn at 800×560, in window coordinates.
const (
	stopX, stopY = 40, 140
	verbX, verbY = 470, 327
)

// In the real window, Activity lists calls by the start time it shows,
// newest first, though the log holds them in the order they ended, with
// outcomes in words (screenshot activity-chronological-800x560).
func TestWindowActivityChronological(t *testing.T) {
	skipUnderRace(t)
	d := startDesktop(t)
	p, _ := d.startTray(t, nil, "--hidden")
	st, err := state.Open(filepath.Join(p.home, ".local", "state", "mcp-sandbox"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	code := 124
	for _, e := range []state.AuditEntry{ // in the order they ended
		{Time: now.Add(-3 * time.Minute), Client: "claude-ai", Tool: "read_file", Summary: "second"},
		{Time: now.Add(-10 * time.Minute), Client: "claude-ai", Tool: "run_code", Summary: "first", ExitCode: &code, TimedOut: true, DurationMS: 9 * 60 * 1000},
		{Time: now.Add(-time.Minute), Client: bundled.TestClientName, Tool: "run_code", Summary: "third"},
	} {
		if err := st.Audit(e); err != nil {
			t.Fatal(err)
		}
	}
	wp := startWindow(t, d, p, nil, "--tab", ui.TabActivity, "--size", "800x560")
	time.Sleep(5 * time.Second)
	windowShown(t, wp, "activity-chronological-800x560")
	wp.endWindow(t)
}
