package engineconn

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// The loop follows the engine DOCKER_HOST names (here a proxy to the real
// one); when the engine goes away it lets go of it, says so and looks
// again, finding nothing; once the engine is back, Redetect finds it at
// once (without the 30-second wait).
func TestLoopEngineGoesAndComesBack(t *testing.T) {
	engine := apptest.Docker(t)
	defer engine.Close()
	dir := t.TempDir()
	px := apptest.StartEngineProxy(t, engine, filepath.Join(dir, "docker.sock"))
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(apptest.ConfigTOML()), 0o600); err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	cfg, err := config.NewWatcher(cfgPath, time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	st, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	looks := make(chan Look, 8)
	lost := make(chan error, 8)
	l := New(Options{
		Getenv: func(k string) string {
			if k == "DOCKER_HOST" {
				return px.Host
			}
			return ""
		},
		Config: cfg, Store: st, Log: log,
		Source: sandboxwatch.DockerSource{LifecycleOnly: true},
		Looked: func(_ context.Context, look Look) { looks <- look },
		Lost:   func(err error) { lost <- err },
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	next := func(what string, within time.Duration) Look {
		t.Helper()
		select {
		case look := <-looks:
			return look
		case <-time.After(within):
			t.Fatalf("no look for the engine within %v: %s", within, what)
			return Look{}
		}
	}
	look := next("the first", time.Minute)
	if look.Err != nil || look.Conn == nil || look.Result.Chosen == nil || look.Result.Chosen.Source != "DOCKER_HOST" || look.Conn.EntryHost != px.Host {
		t.Fatalf("first look: %+v, want the engine at DOCKER_HOST %s", look, px.Host)
	}
	if got := waitConn(t, l, true); got != look.Conn {
		t.Errorf("Conn() is %p, want the look's %p", got, look.Conn)
	}
	if h := l.EntryHost(); h != px.Host {
		t.Errorf("EntryHost() = %q while following, want %q", h, px.Host)
	}

	px.Cut()
	select {
	case err := <-lost:
		if err == nil {
			t.Error("Lost(nil)")
		}
	case <-time.After(time.Minute):
		t.Fatal("the engine went away and Lost was not called")
	}
	if c := l.Conn(); c != nil || l.EntryHost() != "" {
		t.Errorf("Conn() is %v after Lost, want nil", c)
	}
	look = next("after the engine went away", time.Minute)
	if !errors.Is(look.Err, dockerhost.ErrExplicitUnreachable) || look.Conn != nil || look.Result == nil {
		t.Fatalf("look with the engine gone: conn %v, err %v; want ErrExplicitUnreachable", look.Conn, look.Err)
	}

	if err := px.Resume(); err != nil {
		t.Fatal(err)
	}
	l.Redetect()
	// Without Redetect the next look would come after the retry.
	look = next("after Redetect", retry*2/3)
	if look.Err != nil || look.Conn == nil {
		t.Fatalf("look once the engine is back: %v", look.Err)
	}
	waitConn(t, l, true)
}

// waitConn waits for the loop to follow an engine (the loop sets Conn
// just after Looked returns).
func waitConn(t *testing.T, l *Loop, want bool) *Conn {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		c := l.Conn()
		if (c != nil) == want {
			return c
		}
		if time.Now().After(deadline) {
			t.Fatalf("Conn() = %v after 30 s", c)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
