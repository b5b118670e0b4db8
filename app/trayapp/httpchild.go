package trayapp

import (
	"context"
	"os"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/app/supervisor"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// httpChild is the running `mcp-sandbox serve --http` child and its
// supervisor.
type httpChild struct {
	port   int
	sup    *supervisor.Supervisor
	srv    supervisor.HTTPServer
	cancel context.CancelFunc
	done   chan struct{}
}

// applyHTTP brings the HTTP child in line with the current config.
func (a *App) applyHTTP() { a.applyHTTPFor(a.cfg.Current()) }

// applyHTTPFor runs the child while tray.http_port is set, the service is
// not paused, and a server binary exists; it stops it otherwise. A changed
// port restarts it.
func (a *App) applyHTTPFor(c *config.Config) {
	a.mu.Lock()
	paused := a.s.paused
	cur := a.httpChild
	a.mu.Unlock()
	port := c.Tray.HTTPPort
	want := port > 0 && !paused && a.serverErr == nil && a.ctx.Err() == nil
	if cur != nil && (!want || cur.port != port) {
		cur.cancel()
		<-cur.done // the supervisor has stopped the child
		a.mu.Lock()
		a.httpChild = nil
		a.mu.Unlock()
		cur = nil
	}
	if !want {
		state := "off: set an HTTP port in Settings"
		if port > 0 && paused {
			state = "stopped while MCP Sandbox is Paused"
		}
		a.update(func(s *trayState) { s.http = traywin.HTTPInfo{Enabled: port > 0, State: state} })
		return
	}
	if cur != nil {
		return
	}
	token := strings.TrimSpace(a.getenv("MCP_SANDBOX_TOKEN"))
	if token == "" {
		t, err := a.st.Token()
		if err != nil {
			a.log.Error("http token", "err", err)
			return
		}
		token = t
	}
	srv := supervisor.NewHTTPServer(port, token)
	o := srv.Options(a.server.Path, os.Environ())
	o.Log = a.log
	o.Stderr = logWriter{a, "http server: "}
	o.OnChange = func(st supervisor.Status) {
		text := string(st.State)
		if st.LastExit != "" && st.State != supervisor.Running {
			text += " (last run " + st.LastExit + ")"
		}
		a.update(func(s *trayState) {
			s.http = traywin.HTTPInfo{Enabled: true, URL: srv.URL, Token: srv.Token, State: text}
		})
	}
	ctx, cancel := context.WithCancel(a.ctx)
	ch := &httpChild{port: port, sup: supervisor.New(o), srv: srv, cancel: cancel, done: make(chan struct{})}
	a.mu.Lock()
	a.httpChild = ch
	a.mu.Unlock()
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		defer close(ch.done)
		ch.sup.Run(ctx)
	}()
}

// logWriter sends the child's stderr to the tray's log, line by line.
type logWriter struct {
	a      *App
	prefix string
}

func (w logWriter) Write(p []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			w.a.log.Info(w.prefix + line)
		}
	}
	return len(p), nil
}
