//go:build cgo

package windowapp

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// fakeEngine is the part of the Docker API the health checks read: an
// engine without the configured images, whose ping can be made to fail
// (as when the engine goes away between the checks and the ping after).
func fakeEngine(t *testing.T, pingFails *atomic.Bool) *client.Client {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		path := r.URL.Path
		if i := strings.Index(path[1:], "/"); strings.HasPrefix(path, "/v1.") && i > 0 {
			path = path[i+1:]
		}
		switch {
		case path == "/_ping":
			if pingFails.Load() {
				http.Error(w, `{"message":"engine gone"}`, http.StatusServiceUnavailable)
				return
			}
			_, _ = w.Write([]byte("OK"))
		case path == "/info":
			_, _ = w.Write([]byte(`{"NCPU":2,"MemTotal":8589934592,"DefaultRuntime":"runc","Runtimes":{"runc":{}}}`))
		case strings.HasPrefix(path, "/images/"):
			http.Error(w, `{"message":"No such image"}`, http.StatusNotFound)
		default:
			http.Error(w, `{"message":"not in this fake"}`, http.StatusNotImplemented)
		}
	}))
	t.Cleanup(srv.Close)
	cli, err := client.NewClientWithOpts(client.WithHost("tcp://"+strings.TrimPrefix(srv.URL, "http://")), client.WithVersion("1.41"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Close() })
	return cli
}

// A health check that found problems is kept (for a minute) only when
// the engine still answers after it: problems found as the engine went
// away say nothing about the images, and kept, the look that finds the
// engine back would show them from the cache (TestTrayDockerLost's flake).
// Either way the window shows them.
func TestHealthProblemsKeptOnlyWhileTheEngineAnswers(t *testing.T) {
	for _, tc := range []struct {
		name      string
		pingFails bool
		kept      bool
	}{
		{"engine answers", false, true},
		{"engine gone after the checks", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var pingFails atomic.Bool
			pingFails.Store(tc.pingFails)
			cli := fakeEngine(t, &pingFails)
			st, err := state.Open(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			cfg := config.Default()
			cfg.Images.Pull = "never" // a missing image is a problem, with no registry to ask
			a := &App{log: slog.New(slog.DiscardHandler), st: st, cfg: config.Static(cfg)}
			a.handoff.close(false) // no Fyne here: the Status tab is not drawn

			ctx := context.Background()
			a.checkHealth(ctx, &engineconn.Conn{Client: cli})
			a.mu.Lock()
			shown := a.ui.health
			a.mu.Unlock()
			if shown == nil || len(shown.Problems) == 0 {
				t.Fatalf("the window shows no problems for an engine without the images: %+v", shown)
			}
			kept := a.cachedHealth(healthKey(ctx, cli, cfg)) != nil
			if kept != tc.kept {
				t.Errorf("result kept: %v, want %v", kept, tc.kept)
			}
		})
	}
}
