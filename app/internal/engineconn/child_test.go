package engineconn

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
// cluster the child answered, its sandbox shows; a child that dies is
// replaced at the next look; StopAll removes the sandbox through the
// child, and the child ends with the loop.
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
	defer func() { cancel(); <-done }()
	for i := range 2 {
		var look Look
		select {
		case look = <-looks:
		case <-time.After(30 * time.Second):
			t.Fatalf("no look %d within 30s: a child that died is not replaced", i)
		}
		if look.Err != nil || look.Conn == nil || look.Cluster.Place() != "cluster child-lab · namespace sandboxes" {
			t.Fatalf("look %d %+v (cluster %+v): want the child's cluster followed", i, look, look.Cluster)
		}
		snaps.await(t, "the child's sandbox listed", func(s sandboxwatch.Snapshot) bool { return ids(s) == "kid" && s.Err == nil })
		if i == 0 {
			killChildren(t) // the loop looks again, with a new child
		}
	}
	n, err := StopAll(ctx, l.Conn().Backend, st, log)
	if err != nil || n.Sandboxes != 1 {
		t.Errorf("StopAll = %+v, %v; want 1 sandbox", n, err)
	}
	snaps.await(t, "the sandbox gone", func(s sandboxwatch.Snapshot) bool { return len(s.Rows) == 0 && s.Err == nil })
	cancel()
	<-done
	if kids := children(); len(kids) > 0 {
		t.Errorf("children %v outlived the loop", kids)
	}
}

// children are this process's backend-serve children.
func children() []int {
	var out []int
	dirs, _ := filepath.Glob("/proc/[0-9]*")
	for _, d := range dirs {
		stat, err1 := os.ReadFile(filepath.Join(d, "stat"))
		cmd, err2 := os.ReadFile(filepath.Join(d, "cmdline"))
		if err1 != nil || err2 != nil || !strings.Contains(string(cmd), "\x00"+backendrpc.Command) {
			continue
		}
		f := strings.Fields(string(stat[strings.LastIndexByte(string(stat), ')')+1:]))
		if len(f) > 1 && f[1] == strconv.Itoa(os.Getpid()) && f[0] != "Z" {
			pid, _ := strconv.Atoi(filepath.Base(d))
			out = append(out, pid)
		}
	}
	return out
}

// killChildren kills this process's backend-serve children.
func killChildren(t *testing.T) {
	t.Helper()
	kids := children()
	if len(kids) != 1 {
		t.Fatalf("children %v, want one", kids)
	}
	if err := syscall.Kill(kids[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
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
