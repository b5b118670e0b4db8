package trayapp

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
)

// windowHeadline is the Status tab's headline the window last logged
// (it logs each change), or "" before the first.
func (p *trayProc) windowHeadline() string {
	b, _ := os.ReadFile(filepath.Join(p.home, ".local", "state", "mcp-sandbox", "logs", "window.log"))
	all := headlineLine.FindAllSubmatch(b, -1)
	if len(all) == 0 {
		return ""
	}
	return string(all[len(all)-1][1])
}

var headlineLine = regexp.MustCompile(`msg=status headline="((?:[^"\\]|\\.)*)"`)

// Docker stops, and comes back, for the tray and its window (through a
// proxy to the engine, which the test cuts and restores): the menu's first
// line, the icon's state (by the title the tray sets with it), a
// notification and the window's headline say so each time.
func TestTrayDockerLost(t *testing.T) {
	skipUnderRace(t)
	engine := apptest.Docker(t)
	defer engine.Close()
	px := apptest.StartEngineProxy(t, engine, filepath.Join(t.TempDir(), "docker.sock"))
	d := startDesktop(t)
	p, m := d.startTray(t, []string{"DOCKER_HOST=" + px.Host}, "--hidden")
	dockerUp := func(when string) {
		t.Helper()
		if _, err := m.waitMenu(60*time.Second, func(items []menuItem) bool {
			return strings.HasPrefix(statusLine(items), "Docker: Docker")
		}); err != nil {
			t.Fatalf("%s: the menu does not show Docker: %v\n%s", when, err, p.log())
		}
		waitFor(t, when+": the title to count sandboxes", 30*time.Second, func() bool {
			v, _ := m.itemProp("Title")
			s, _ := v.(string)
			return strings.HasPrefix(s, "MCP Sandbox — ") && (strings.HasSuffix(s, "sandboxes") || strings.HasSuffix(s, "sandbox"))
		})
		// The window's own log on a timeout: the headlines it showed and
		// what its engine loop did (a run in CI once waited here in vain).
		deadline := time.Now().Add(60 * time.Second)
		for !strings.HasPrefix(p.windowHeadline(), "Running") {
			if time.Now().After(deadline) {
				t.Fatalf("%s: the window's headline did not say Running within 60 s; the end of its log:\n%s",
					when, tail(p.windowLog(), 12000))
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	click(t, m, traymenu.LabelOpen)
	windowShown(t, p, "docker-lost-before")
	dockerUp("before")
	iconBefore, err := m.itemProp("IconPixmap")
	if err != nil {
		t.Fatal(err)
	}

	px.Cut()
	items, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		return statusLine(items) == "Docker: not reachable"
	})
	if err != nil {
		t.Fatalf("the menu did not say Docker is gone: %v\nlog:\n%s", err, p.log())
	}
	if it, ok := find(items, traymenu.LabelStopAll); !ok || it.Enabled {
		t.Errorf("Stop all is %+v while Docker is gone, want disabled", it)
	}
	// "no longer reachable" when the events stream broke, "not
	// reachable" when a look found nothing.
	note := d.waitNote(t, "a notification that Docker is gone", "Docker is no", "reachable")
	if strings.Contains(note, "EOF") || strings.Contains(note, "error during connect") {
		t.Errorf("the notification %q speaks the engine's jargon", note)
	}
	waitFor(t, "the title to say Docker is gone", 10*time.Second, func() bool {
		v, _ := m.itemProp("Title")
		return v == "MCP Sandbox — Docker not reachable"
	})
	iconAfter, err := m.itemProp("IconPixmap")
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(iconBefore, iconAfter) {
		t.Error("the tray icon did not change when Docker went away")
	}
	waitFor(t, "the window's headline to say Docker is gone", 30*time.Second, func() bool {
		return strings.HasPrefix(p.windowHeadline(), "Docker not")
	})
	windowShown(t, p, "docker-lost-gone")

	// Back: both look again within their 30-second retry.
	if err := px.Resume(); err != nil {
		t.Fatal(err)
	}
	dockerUp("after Docker came back")
	d.waitNote(t, "a notification that Docker is back", "Docker is reachable again")
	// The health check that follows a look runs on its own goroutine
	// (checkHealth): the icon's badge follows it, so the icon is waited
	// for, not read once.
	deadline := time.Now().Add(60 * time.Second)
	for {
		iconBack, err := m.itemProp("IconPixmap")
		if err != nil {
			t.Fatal(err)
		}
		if reflect.DeepEqual(iconBefore, iconBack) {
			break
		}
		if time.Now().After(deadline) {
			title, _ := m.itemProp("Title")
			items, _ := m.layout()
			t.Errorf("the tray icon did not come back with Docker within 60 s; title %q, menu %+v\ntray log:\n%s", title, items, p.log())
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	windowShown(t, p, "docker-lost-back")
	p.stop(t)
}
