package trayapp

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// engineJargon is what a notification must not say: the engine's and the
// transport's words, which mean nothing to the person reading it.
var engineJargon = []string{"EOF", "error during connect", "dial unix", "connection refused", "docker.sock", "http://", "Cannot connect"}

// Docker is lost with a sandbox alive, at 800×560: the tray and a window
// of that size follow the engine through a proxy the test cuts (the
// shared dockerd and the sandbox run on; the sandbox's server talks to
// the engine directly). While Docker is gone every tab is shown and
// screenshot, and the window stays 800×560 (a label that does not wrap
// makes Fyne grow the window to its content's minimum, which the X
// server then reports); the tray's notification speaks no engine jargon.
// When the proxy listens again the window counts the sandbox again.
func TestDockerLostLiveSandbox800(t *testing.T) {
	skipUnderRace(t)
	needXdotool(t)
	engine := apptest.Docker(t, apptest.PythonImage)
	defer engine.Close()
	px := apptest.StartEngineProxy(t, engine, filepath.Join(t.TempDir(), "docker.sock"))
	d := startDesktop(t)
	p, _ := d.startTray(t, []string{"DOCKER_HOST=" + px.Host}, "--hidden")

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	server := filepath.Join(filepath.Dir(apptest.Binary(t, "mcp-sandbox-tray")), "mcp-sandbox")
	s, err := bundled.Connect(ctx, bundled.ConnectOptions{Path: server, ClientName: "lost-test", Getenv: func(k string) string {
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

	wp := startWindow(t, d, p, []string{"DOCKER_HOST=" + px.Host}, "--tab", ui.TabSandboxes, "--size", "800x560")
	sandboxShown := func(when string) {
		t.Helper()
		waitFor(t, when+": the window to count the sandbox", 90*time.Second, func() bool {
			h := p.windowHeadline()
			return strings.HasPrefix(h, "Running") && strings.HasSuffix(h, "· 1 sandbox")
		})
	}
	sandboxShown("before")
	windowShown(t, wp, "docker-lost-live-800-before")
	check800(t, wp, "before")

	px.Cut()
	waitFor(t, "the window's headline to say Docker is gone", 60*time.Second, func() bool {
		h := p.windowHeadline()
		return strings.HasPrefix(h, "Docker stopped answering") || strings.HasPrefix(h, "Docker not")
	})
	note := d.waitNote(t, "a notification that Docker is gone", "Docker is no", "reachable")
	for _, w := range engineJargon {
		if strings.Contains(note, w) {
			t.Errorf("the notification %q says %q", note, w)
		}
	}
	for _, tab := range []string{ui.TabStatus, ui.TabSandboxes, ui.TabClients, ui.TabSettings, ui.TabActivity} {
		wp.selectTab(t, tab)
		windowShown(t, wp, "docker-lost-live-800-"+strings.ToLower(tab))
		check800(t, wp, "Docker gone, "+tab+" tab")
	}
	if !exists(t, engine, id) {
		t.Fatalf("sandbox %s is gone: losing Docker for the window must not touch it", id)
	}

	if err := px.Resume(); err != nil {
		t.Fatal(err)
	}
	wp.selectTab(t, ui.TabSandboxes)
	sandboxShown("after Docker came back")
	d.waitNote(t, "a notification that Docker is back", "Docker is reachable again")
	windowShown(t, wp, "docker-lost-live-800-back")
	check800(t, wp, "Docker back")
	if !alive(wp.pid) || strings.Contains(p.log(), "ended unexpectedly") {
		t.Errorf("the window died:\n%s", wp.stderr)
	}
	wp.endWindow(t)
	p.stop(t)
}

// check800 fails the test unless the window stays 800×560 on the X server
// (three looks over a second: Fyne grows it a few frames after a layout):
// nothing of its content needs more, so nothing is off-screen.
func check800(t *testing.T, p *trayProc, when string) {
	t.Helper()
	for i := 0; i < 3; i++ {
		if i > 0 {
			time.Sleep(500 * time.Millisecond)
		}
		if w, h := p.geometry(t); w != 800 || h != 560 {
			t.Errorf("%s: the window is %d×%d, want 800×560 (its content's minimum size is larger: something does not wrap)", when, w, h)
			return
		}
	}
}
