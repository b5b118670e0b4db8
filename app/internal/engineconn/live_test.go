package engineconn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestLoopUsageLiveAcrossEngines: usage asked for before any engine is
// found (the window opens on its Sandboxes tab, or a details view, while
// the engine is still being looked for) is sampled once the engine
// answers, and again for the model of the engine found after Redetect.
// The details view showed "–" for a running sandbox when this was lost.
func TestLoopUsageLiveAcrossEngines(t *testing.T) {
	cli := apptest.Docker(t, apptest.PythonImage)
	defer cli.Close()
	dir := t.TempDir()
	log := slog.New(slog.DiscardHandler)
	st, err := state.Open(filepath.Join(dir, "state"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(cfgPath, []byte(apptest.ConfigTOML()), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.NewWatcher(cfgPath, time.Second, log)
	if err != nil {
		t.Fatal(err)
	}
	px := apptest.StartEngineProxy(t, cli, filepath.Join(dir, "docker.sock"))

	be := docker.New(cli, log)
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	id := "lv" + hex.EncodeToString(b)
	ctx := context.Background()
	cid, err := be.Create(ctx, backend.ContainerSpec{
		Name: backend.ContainerName(id), Image: apptest.PythonImage, User: "1000:1000",
		Labels:      map[string]string{backend.LabelManaged: "true", backend.LabelID: id, backend.LabelOwner: "live-test-" + id, backend.LabelInstallation: inst},
		MemoryBytes: 64 << 20, NanoCPUs: 5e8, Pids: 32, WorkspaceMB: 8, TmpMB: 8,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = be.Remove(context.Background(), cid) })

	l := New(Options{
		Getenv: func(k string) string {
			if k == "DOCKER_HOST" {
				return px.Host
			}
			return ""
		},
		Config: cfg, Store: st, Log: log,
		Source: sandboxwatch.DockerSource{RecordsDir: filepath.Join(st.Dir(), "sandboxes")},
		Looked: func(context.Context, Look) {},
	})
	l.SetLive(true) // before the loop has found anything
	rctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.Run(rctx); close(done) }()
	defer func() { cancel(); <-done }()

	first := waitConn(t, l, true)
	waitSampled(t, first, cid, "the first engine's model")

	l.Redetect()
	deadline := time.Now().Add(30 * time.Second)
	var second *Conn
	for second == nil || second == first {
		if time.Now().After(deadline) {
			t.Fatal("no new engine followed within 30 s of Redetect")
		}
		time.Sleep(50 * time.Millisecond)
		second = l.Conn()
	}
	waitSampled(t, second, cid, "the model after Redetect")
}

// waitSampled waits for c's model to have sampled container cid's usage.
func waitSampled(t *testing.T, c *Conn, cid, what string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		for _, r := range c.Model.Snapshot().Rows {
			if r.ContainerID == cid && !r.Sampled.IsZero() {
				if r.Usage.MemoryBytes == 0 || r.Usage.Pids == 0 {
					t.Errorf("%s: usage %+v, want memory and pids", what, r.Usage)
				}
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: no usage sampled within 30 s: %+v", what, c.Model.Snapshot())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
