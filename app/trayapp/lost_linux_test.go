package trayapp

import (
	"io"
	"net"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
)

// proxy forwards a unix socket to the real engine until cut: then the
// listener and every forwarded connection close, so for the tray pointed
// at it (DOCKER_HOST) Docker is gone, while the shared dockerd runs on.
type proxy struct {
	l     net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func startProxy(t *testing.T, path, target string) *proxy {
	t.Helper()
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{l: l}
	t.Cleanup(p.cut)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			u, err := net.Dial("unix", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, u)
			p.mu.Unlock()
			go func() { io.Copy(u, c); u.Close() }()
			go func() { io.Copy(c, u); c.Close() }()
		}
	}()
	return p
}

func (p *proxy) cut() {
	p.l.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Docker stops for the tray: the menu's first line, the icon's state (by
// the title the tray sets with it) and a notification say so.
func TestTrayDockerLost(t *testing.T) {
	skipUnderRace(t)
	engine := apptest.Docker(t)
	defer engine.Close()
	real, ok := strings.CutPrefix(engine.DaemonHost(), "unix://")
	if !ok {
		t.Skipf("the engine is at %s, not a unix socket", engine.DaemonHost())
	}
	bus, err := startBus()
	if err != nil {
		t.Fatal(err)
	}
	defer bus.stop()
	if _, err := startWatcher(bus.addr); err != nil {
		t.Fatal(err)
	}
	notes, err := startNotifier(bus.addr)
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(t.TempDir(), "docker.sock")
	px := startProxy(t, sock, real)
	p := startTrayEnv(t, bus.addr, []string{"DOCKER_HOST=unix://" + sock}, "--hidden")
	var m *trayMenu
	waitFor(t, "the tray's menu", 30*time.Second, func() bool {
		m, err = openTrayMenu(bus.addr, p.pid)
		return err == nil
	})
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		return strings.HasPrefix(statusLine(items), "Docker: Docker")
	}); err != nil {
		t.Fatalf("the menu never showed Docker: %v\n%s", err, p.log())
	}
	title, _ := m.itemProp("Title")
	if s, _ := title.(string); !strings.HasPrefix(s, "MCP Sandbox — ") || !strings.HasSuffix(s, "sandboxes") && !strings.HasSuffix(s, "sandbox") {
		t.Errorf("the tray item's title is %q, want \"MCP Sandbox — N sandboxes\"", title)
	}
	iconBefore, err := m.itemProp("IconPixmap")
	if err != nil {
		t.Fatal(err)
	}
	px.cut()
	items, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		return statusLine(items) == "Docker: not reachable"
	})
	if err != nil {
		t.Fatalf("the menu did not say Docker is gone: %v\nlog:\n%s", err, p.log())
	}
	if it, ok := find(items, traymenu.LabelStopAll); !ok || it.Enabled {
		t.Errorf("Stop all is %+v while Docker is gone, want disabled", it)
	}
	waitFor(t, "a notification that Docker is gone", 30*time.Second, func() bool {
		for _, n := range notes.all() {
			if strings.Contains(n, "Docker is no longer reachable") || strings.Contains(n, "Docker is not reachable") {
				return true
			}
		}
		return false
	})
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
	p.stop(t)
}
