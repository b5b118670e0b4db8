package dockerhost

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/docker/docker/client"
)

// pingServer serves /_ping on a unix socket.
func pingServer(t *testing.T, sock string) {
	t.Helper()
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Api-Version", "1.41")
		w.Write([]byte("OK"))
	})}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
}

// TestRedialerFindsEngineStartedLater: the server started before the
// engine; once the engine is up (on another socket), the same client works.
func TestRedialerFindsEngineStartedLater(t *testing.T) {
	dir := t.TempDir()
	later := filepath.Join(dir, "colima.sock")
	var detections atomic.Int32
	up := atomic.Bool{}
	r := NewRedialer("", func(ctx context.Context) *Result {
		detections.Add(1)
		if !up.Load() {
			return &Result{}
		}
		c := &Candidate{Host: "unix://" + later, OK: true}
		return &Result{Chosen: c}
	})
	r.MinInterval = time.Millisecond
	cli, err := client.NewClientWithOpts(r.ClientOptions()...)
	if err != nil {
		t.Fatal(err)
	}
	defer cli.Close()
	ctx := context.Background()
	if _, err := cli.Ping(ctx); err == nil {
		t.Fatal("ping succeeded with no engine")
	}
	pingServer(t, later)
	up.Store(true)
	time.Sleep(2 * time.Millisecond)
	if _, err := cli.Ping(ctx); err != nil {
		t.Fatalf("ping after the engine came up: %v", err)
	}
	if r.Path() != later {
		t.Errorf("path = %q", r.Path())
	}
	// Working connections do not run detection again.
	n := detections.Load()
	for i := 0; i < 5; i++ {
		cli.Ping(ctx)
	}
	if detections.Load() != n {
		t.Errorf("detection ran while the engine answered")
	}
}

// TestRedialerRateLimited: a dead engine is not re-detected on every call.
func TestRedialerRateLimited(t *testing.T) {
	var detections atomic.Int32
	r := NewRedialer("unix://"+filepath.Join(t.TempDir(), "dead.sock"), func(ctx context.Context) *Result {
		detections.Add(1)
		return &Result{}
	})
	r.MinInterval = time.Hour
	for i := 0; i < 10; i++ {
		r.DialContext(context.Background(), "unix", "")
	}
	if detections.Load() != 1 {
		t.Errorf("detections = %d, want 1", detections.Load())
	}
}
