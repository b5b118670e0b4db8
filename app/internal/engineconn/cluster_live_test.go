package engineconn

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/kubeconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// clusterNamespace makes a namespace of the test's own on the cluster
// MCP_SANDBOX_TEST_KUBECONFIG names (skipping without it), deleted after
// the test, and returns the kubeconfig's path, the namespace and a client.
func clusterNamespace(ctx context.Context, t *testing.T) (string, string, *k8s.Clientset) {
	t.Helper()
	path := os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG")
	if path == "" {
		t.Skip("MCP_SANDBOX_TEST_KUBECONFIG is not set (.ci/k8s-up prints a kubeconfig)")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	cs, err := k8s.NewForConfig(rc)
	if err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	ns := "readers-" + hex.EncodeToString(b)
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}) })
	return path, ns, cs
}

// On the real cluster: a sandbox a server's engine creates there (its
// backend made by kubeconn.Open, the server's constructor) shows in the
// watcher's snapshot, read through the real server binary (`mcp-sandbox
// backend-serve`, as the tray and the window read it), with the cluster
// and namespace in the look, its usage sampled while live; Stop from the
// watcher (StopAll on the followed backend) removes it, and its pod is
// gone from the cluster.
func TestWatcherOnCluster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	kubeconfig, ns, cs := clusterNamespace(ctx, t)
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Backend.Kind = config.BackendKubernetes
	cfg.Kubernetes.Kubeconfig, cfg.Kubernetes.Namespace = kubeconfig, ns
	// Plain pods under gVisor: the bridge CNI enforces no NetworkPolicy,
	// gVisor's loopback-only pods isolate.
	cfg.Kubernetes.UseAgentSandbox, cfg.Kubernetes.RuntimeClass = "never", "gvisor"
	cfg.Images.Python, cfg.Images.Pull, cfg.Pool.Size = "mcp-sandbox-test/python:3", "never", 0
	st, err := state.Open(filepath.Join(t.TempDir(), "state"))
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	kb, err := kubeconn.Open(ctx, cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: kb, Config: config.Static(cfg), State: st, OwnerID: "server-on-cluster"})
	defer eng.Close(context.Background())

	var snaps snapshots
	looks := make(chan Look, 4)
	l := New(Options{Config: config.Static(cfg), Store: st, Log: log, OnChange: snaps.set, PollInterval: 250 * time.Millisecond,
		Server: apptest.Binary(t, "mcp-sandbox"),
		Looked: func(_ context.Context, look Look) { looks <- look }})
	l.SetLive(true)
	lctx, lcancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { l.Run(lctx); close(done) }()
	defer func() { lcancel(); <-done }()
	look := <-looks
	if look.Err != nil || look.Conn == nil || look.Cluster == nil || look.Cluster.Name == "" || look.Cluster.Namespace != ns {
		t.Fatalf("look %+v (cluster %+v): want the cluster followed", look, look.Cluster)
	}
	if want := "cluster " + kb.Cluster() + " · namespace " + ns; look.Cluster.Place() != want {
		t.Errorf("place %q, want %q", look.Cluster.Place(), want)
	}

	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
	if err != nil {
		t.Fatal(err)
	}
	snaps.awaitFor(t, "the sandbox listed, its usage sampled", 90*time.Second, func(s sandboxwatch.Snapshot) bool {
		return len(s.Rows) == 1 && s.Rows[0].ID == sb.ID && !s.Rows[0].Sampled.IsZero()
	})
	sel := metav1.ListOptions{LabelSelector: backend.LabelID + "=" + sb.ID}
	if pods, err := cs.CoreV1().Pods(ns).List(ctx, sel); err != nil || len(pods.Items) != 1 {
		t.Fatalf("the sandbox's pod by its id label: %v, %d pods", err, len(pods.Items))
	}
	peerThroughChild(ctx, t, l.Conn().Backend, eng, st, cfg, sb.ID)
	n, err := StopAll(ctx, l.Conn().Backend, st, log)
	if err != nil || n.Sandboxes != 1 {
		t.Fatalf("StopAll: %+v %v, want 1 sandbox", n, err)
	}
	snaps.awaitFor(t, "the sandbox gone", 60*time.Second, func(s sandboxwatch.Snapshot) bool { return len(s.Rows) == 0 && s.Err == nil })
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, sel)
		if err == nil && len(pods.Items) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sandbox's pod is still on the cluster after 60s (%v, %d pods)", err, len(pods.Items))
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// peerThroughChild is the window's details of sandbox id through be (the
// child): a file the server wrote is listed and saved to the host.
func peerThroughChild(ctx context.Context, t *testing.T, be backend.Backend, eng *sandbox.Engine, st *state.Store, cfg *config.Config, id string) {
	t.Helper()
	if _, err := eng.WriteFile(ctx, id, sandbox.WriteFileRequest{Path: "notes.txt", Content: []byte("from the cluster")}); err != nil {
		t.Fatal(err)
	}
	c := *cfg
	c.Files.WriteRoot = t.TempDir()
	p, err := sandbox.OpenPeer(ctx, be, st, &c, nil, id)
	if err != nil {
		t.Fatalf("OpenPeer through the child: %v", err)
	}
	files, err := p.ListFiles(ctx, sandbox.ListFilesRequest{Path: backend.Workspace, Recursive: true})
	if err != nil || !slices.ContainsFunc(files.Entries, func(e backend.FileEntry) bool { return strings.HasSuffix(e.Path, "notes.txt") }) {
		t.Fatalf("ListFiles through the child = %+v, %v; want notes.txt", files.Entries, err)
	}
	res, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "notes.txt", HostPath: filepath.Join(c.Files.WriteRoot, "notes.txt")})
	if err != nil {
		t.Fatalf("CopyOut through the child: %v", err)
	}
	if b, err := os.ReadFile(res.HostPath); err != nil || string(b) != "from the cluster" {
		t.Errorf("saved %q, %v", b, err)
	}
}
