package engineconn

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/backendrpc"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// childEnv makes this test binary a fake `mcp-sandbox backend-serve`
// (TestMain): its cluster holds one sandbox of the installation it names.
const childEnv = "ENGINECONN_TEST_CHILD_INSTALLATION"

func TestMain(m *testing.M) {
	if inst := os.Getenv(childEnv); inst != "" && len(os.Args) > 1 && os.Args[1] == backendrpc.Command {
		os.Exit(serveFakeCluster(inst))
	}
	code := m.Run()
	apptest.Cleanup()
	os.Exit(code)
}

// serveFakeCluster serves a fake backend, as the cluster "child-lab", on
// stdin and stdout until stdin ends.
func serveFakeCluster(inst string) int {
	fb := fake.New()
	fb.Put(backend.ContainerSpec{Name: backend.NamePrefix + "kid", Image: fake.DefaultImage, Labels: map[string]string{
		backend.LabelManaged: "true", backend.LabelID: "kid", backend.LabelInstallation: inst}})
	open := func(_ context.Context, k config.Kubernetes) (backend.Backend, backendrpc.Place, error) {
		return fb, backendrpc.Place{Cluster: "child-lab", Namespace: k.Namespace}, nil
	}
	if err := backendrpc.Serve(context.Background(), os.Stdin, os.Stdout, open, slog.New(slog.DiscardHandler)); err != nil {
		return 1
	}
	return 0
}

// Without OpenCluster, the loop reads the cluster through the server
// binary (here this test binary as a fake child): the look names the
// cluster the child answered, its sandbox shows, StopAll removes it
// through the child, and the child ends with the loop.
func TestLoopReadsClusterThroughChild(t *testing.T) {
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv(childEnv, inst)
	var snaps snapshots
	looks := make(chan Look, 4)
	log := slog.New(slog.DiscardHandler)
	l := New(Options{Config: config.Static(clusterConfig()), Store: st, Log: log, Server: os.Args[0],
		OnChange: snaps.set, PollInterval: 20 * time.Millisecond,
		Looked: func(_ context.Context, look Look) { looks <- look }})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { l.Run(ctx); close(done) }()
	look := <-looks
	if look.Err != nil || look.Conn == nil || look.Cluster.Place() != "cluster child-lab · namespace sandboxes" {
		cancel()
		<-done
		t.Fatalf("look %+v (cluster %+v): want the child's cluster followed", look, look.Cluster)
	}
	child := l.child
	snaps.await(t, "the child's sandbox listed", func(s sandboxwatch.Snapshot) bool { return ids(s) == "kid" })
	n, err := StopAll(ctx, l.Conn().Backend, st, log)
	if err != nil || n.Sandboxes != 1 {
		t.Errorf("StopAll = %+v, %v; want 1 sandbox", n, err)
	}
	snaps.await(t, "the sandbox gone", func(s sandboxwatch.Snapshot) bool { return len(s.Rows) == 0 && s.Err == nil })
	cancel()
	<-done
	if child.Alive() {
		t.Error("the child outlived the loop")
	}
}

// Without the server binary, a cluster's look fails saying what to do.
func TestLoopWithoutServerBinary(t *testing.T) {
	l := New(Options{Config: config.Static(clusterConfig()), Log: slog.New(slog.DiscardHandler),
		ServerErr: errors.New("bundled mcp-sandbox not found: tried /opt/x/mcp-sandbox and PATH")})
	look := l.look(context.Background())
	if !errors.Is(look.Err, ErrNoServer) || !strings.Contains(look.Err.Error(), "reinstall MCP Sandbox") || !strings.Contains(look.Err.Error(), "/opt/x") {
		t.Errorf("look.Err = %v; want ErrNoServer, where it was looked for and what to do", look.Err)
	}
	if look.Cluster == nil || look.Conn != nil {
		t.Errorf("look %+v: want the cluster named, nothing followed", look)
	}
}
