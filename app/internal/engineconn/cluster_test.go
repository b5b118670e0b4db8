package engineconn

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// snapshots keeps the latest snapshot a loop published.
type snapshots struct {
	mu   sync.Mutex
	last sandboxwatch.Snapshot
}

func (s *snapshots) set(snap sandboxwatch.Snapshot) {
	s.mu.Lock()
	s.last = snap
	s.mu.Unlock()
}

// await polls until ok holds for the latest snapshot, or fails after 15s.
func (s *snapshots) await(t *testing.T, what string, ok func(sandboxwatch.Snapshot) bool) sandboxwatch.Snapshot {
	t.Helper()
	return s.awaitFor(t, what, 15*time.Second, ok)
}

// awaitFor is await with another deadline.
func (s *snapshots) awaitFor(t *testing.T, what string, within time.Duration, ok func(sandboxwatch.Snapshot) bool) sandboxwatch.Snapshot {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		s.mu.Lock()
		snap := s.last
		s.mu.Unlock()
		if ok(snap) {
			return snap
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v; last snapshot %+v", what, within, snap)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// ids are the sandbox ids of a snapshot's rows.
func ids(snap sandboxwatch.Snapshot) string {
	var out []string
	for _, r := range snap.Rows {
		out = append(out, r.ID)
	}
	return strings.Join(out, ",")
}

// clusterConfig is a config with backend.kind "kubernetes" and the fake
// backend's image for every language.
func clusterConfig() *config.Config {
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Backend.Kind = config.BackendKubernetes
	cfg.Kubernetes.Context, cfg.Kubernetes.Namespace = "lab", "sandboxes"
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	return cfg
}

// With backend.kind "kubernetes" the loop follows the cluster through
// the backend contract alone (here the in-memory backend in the
// cluster's place), never Docker: the look names the cluster and
// namespace, a sandbox a server makes shows, one stopped as the window's
// Stop does goes, StopAll removes the rest, and a list that fails is the
// snapshot's error until the cluster answers again.
func TestLoopFollowsClusterThroughBackend(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := clusterConfig()
	be := fake.New()
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), State: st, OwnerID: "server-1"})
	defer eng.Close(context.Background())
	var snaps snapshots
	looks := make(chan Look, 4)
	l := New(Options{
		Config: config.Static(cfg), Store: st, Log: slog.New(slog.DiscardHandler),
		OnChange: snaps.set, PollInterval: 20 * time.Millisecond,
		Looked: func(_ context.Context, look Look) { looks <- look },
		OpenCluster: func(ctx context.Context, c *config.Config, _ *slog.Logger) (backend.Backend, *Cluster, error) {
			return be, &Cluster{Context: c.Kubernetes.Context, Name: "lab-cluster", Namespace: c.Kubernetes.Namespace}, nil
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()

	look := <-looks
	if look.Err != nil || look.Conn == nil || look.Conn.Client != nil || look.Cluster == nil || look.Result.Chosen != nil {
		t.Fatalf("look %+v: want the cluster followed, no Docker", look)
	}
	if p := look.Cluster.Place(); p != "cluster lab-cluster · namespace sandboxes" {
		t.Errorf("place %q", p)
	}
	a, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
	if err != nil {
		t.Fatal(err)
	}
	snaps.await(t, "both sandboxes listed", func(s sandboxwatch.Snapshot) bool { return len(s.Rows) == 2 && s.Err == nil })

	conn := l.Conn()
	if _, err := inventory.Stop(ctx, conn.Backend, st, inventory.StopRequest{ID: a.ID}); err != nil {
		t.Fatalf("stop %s: %v", a.ID, err)
	}
	snaps.await(t, "the stopped one gone", func(s sandboxwatch.Snapshot) bool { return ids(s) == b.ID })

	be.Fail(fake.OpList, -1, backend.ErrDockerUnreachable)
	snaps.await(t, "the failed list shown", func(s sandboxwatch.Snapshot) bool { return s.Err != nil })
	be.Heal()
	snaps.await(t, "listed again", func(s sandboxwatch.Snapshot) bool { return s.Err == nil && ids(s) == b.ID })

	n, err := StopAll(ctx, conn.Backend, st, slog.New(slog.DiscardHandler))
	if err != nil || n.Sandboxes != 1 {
		t.Fatalf("StopAll: %+v %v, want 1 sandbox", n, err)
	}
	snaps.await(t, "none left", func(s sandboxwatch.Snapshot) bool { return len(s.Rows) == 0 && s.Err == nil })
	if left := be.Containers(); len(left) != 0 {
		t.Errorf("containers left on the backend: %+v", left)
	}
}

// A cluster that does not answer: the look carries the error naming it
// and the cluster's place, follows nothing, and Docker is not looked for.
func TestLoopClusterDoesNotAnswer(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := clusterConfig()
	refused := errors.New("kubernetes: context lab (https://127.0.0.1:1) does not answer")
	looks := make(chan Look, 4)
	l := New(Options{
		Config: config.Static(cfg), Store: st, Log: slog.New(slog.DiscardHandler),
		Getenv: func(string) string { t.Error("the environment was read for Docker"); return "" },
		Looked: func(_ context.Context, look Look) { looks <- look },
		OpenCluster: func(ctx context.Context, c *config.Config, _ *slog.Logger) (backend.Backend, *Cluster, error) {
			return nil, &Cluster{Context: c.Kubernetes.Context, Namespace: c.Kubernetes.Namespace}, refused
		},
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	look := <-looks
	cancel()
	<-done
	if !errors.Is(look.Err, refused) || look.Conn != nil || look.Cluster == nil || look.Result == nil || len(look.Result.Candidates) != 0 {
		t.Fatalf("look %+v", look)
	}
	if p := look.Cluster.Place(); p != "cluster lab · namespace sandboxes" {
		t.Errorf("place %q", p)
	}
	if l.Conn() != nil {
		t.Error("a conn is followed")
	}
}

// EngineKey changes with what picks the engine, and only with it.
func TestEngineKey(t *testing.T) {
	a, b := clusterConfig(), clusterConfig()
	b.Images.Python = "other"
	if EngineKey(a) != EngineKey(b) {
		t.Error("the key changed with the images")
	}
	b.Kubernetes.Namespace = "other"
	if EngineKey(a) == EngineKey(b) {
		t.Error("the key did not change with the namespace")
	}
	d := config.Default()
	if EngineKey(a) == EngineKey(d) {
		t.Error("the key did not change with the backend's kind")
	}
}
