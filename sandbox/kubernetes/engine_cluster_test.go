package kubernetes_test

// The engine (package sandbox) on the Kubernetes backend, on the real test
// cluster: what a person does through the tools, and the fences, hold.

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// clusterEngine is an engine on a Kubernetes backend (agent-sandbox
// Sandboxes under the gvisor RuntimeClass) in a namespace of the test's
// own, as the cluster's admin or, with readmeRole, as a ServiceAccount
// bound to the RBAC block of docs/kubernetes.md; with a read root and a write root of
// its own; closed at the end.
func clusterEngine(t *testing.T, readmeRole bool) (*sandbox.Engine, *kubernetes.Backend, *config.Config) {
	t.Helper()
	kc := kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor"}
	if readmeRole {
		kc.Kubeconfig, kc.Namespace = kubernetes.ReadmeRole(t)
	}
	return clusterEngineWith(t, kc)
}

// clusterEngineWith is clusterEngine on a backend of kc.
func clusterEngineWith(t *testing.T, kc kubernetes.Config) (*sandbox.Engine, *kubernetes.Backend, *config.Config) {
	t.Helper()
	be := kubernetes.NewTestBackend(t, kc)
	eng, cfg := clusterEngineOn(t, be, nil)
	return eng, be, cfg
}

// clusterEngineOn is clusterEngine on be, its configuration changed by
// edit (when not nil) before the engine starts.
func clusterEngineOn(t *testing.T, be *kubernetes.Backend, edit func(*config.Config)) (*sandbox.Engine, *config.Config) {
	t.Helper()
	return clusterEngineOnBackend(t, be, edit)
}

// clusterEngineOnBackend is clusterEngineOn on be, the cluster's backend
// or one that wraps it.
func clusterEngineOnBackend(t *testing.T, be backend.Backend, edit func(*config.Config)) (*sandbox.Engine, *config.Config) {
	t.Helper()
	eng, cfg, closeEngine := clusterEngineClosable(t, be, edit)
	t.Cleanup(closeEngine)
	return eng, cfg
}

// clusterEngineClosable is clusterEngineOnBackend with the engine's close
// (its housekeeping stopped, then Close) for the test to call, once.
func clusterEngineClosable(t *testing.T, be backend.Backend, edit func(*config.Config)) (*sandbox.Engine, *config.Config, func()) {
	t.Helper()
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Images.Python = "mcp-sandbox-test/python:3"
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	cfg.Files.ReadRoots = []string{t.TempDir()}
	cfg.Files.WriteRoot = t.TempDir()
	if edit != nil {
		edit(cfg)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), TickInterval: time.Second})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx) // housekeeping: the Sandbox's shutdownTime follows use
	}()
	var once sync.Once
	return eng, cfg, func() {
		once.Do(func() {
			cancel()
			<-done
			if err := eng.Close(context.Background()); err != nil {
				t.Errorf("close engine: %v", err)
			}
		})
	}
}

// shutdownLeased checks that the Sandbox's shutdownTime is a lease
// ahead (kubernetes.DefaultLease), not the expiry half an hour away: the
// cluster removes it within minutes should the server and its watchdog
// die.
func shutdownLeased(ctx context.Context, t *testing.T, be *kubernetes.Backend, sb *sandbox.Sandbox) {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	gvr, err := kubernetes.DiscoverAgentSandbox(clientset(t).Discovery())
	if err != nil {
		t.Fatal(err)
	}
	u, err := dynamic.NewForConfigOrDie(rc).Resource(gvr).Namespace(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	v, _, _ := unstructured.NestedString(u.Object, "spec", "shutdownTime")
	if at, err := time.Parse(time.RFC3339, v); err != nil || time.Until(at) <= 0 || time.Until(at) > kubernetes.DefaultLease+5*time.Second {
		t.Fatalf("the Sandbox's shutdownTime is %s (%v): want a lease (%v) ahead", v, err, kubernetes.DefaultLease)
	}
}

// contractLabelled checks, right after Create returned, that a selector
// on the contract's id label finds sb's pod, and that the pod carries the
// contract labels as the Docker backend puts them on a container (each
// whose value Kubernetes takes as a label value; the expiry's is kept as
// an annotation only).
func contractLabelled(ctx context.Context, t *testing.T, eng *sandbox.Engine, be *kubernetes.Backend, sb *sandbox.Sandbox) {
	t.Helper()
	pods, err := clientset(t).CoreV1().Pods(be.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelID + "=" + sb.ID})
	if err != nil {
		t.Fatal(err)
	}
	if len(pods.Items) != 1 || pods.Items[0].Name != sb.ContainerID {
		t.Fatalf("selector %s=%s right after create: %d pods, want pod %s", backend.LabelID, sb.ID, len(pods.Items), sb.ContainerID)
	}
	got := pods.Items[0].Labels
	for k, want := range map[string]string{
		backend.LabelManaged: "true", backend.LabelID: sb.ID, backend.LabelOwner: eng.Owner(),
		backend.LabelLanguage: sb.Language, backend.LabelClient: sb.Client, backend.LabelNetwork: sb.Network,
		backend.LabelMemoryMB: strconv.Itoa(sb.Limits.MemoryMB), backend.LabelCPUs: strconv.FormatFloat(sb.Limits.CPUs, 'f', -1, 64),
		backend.LabelPids: strconv.Itoa(sb.Limits.Pids), backend.LabelWorkspaceMB: strconv.Itoa(sb.Limits.WorkspaceMB),
		backend.LabelExecTimeout: strconv.Itoa(sb.Limits.ExecTimeoutSeconds),
	} {
		if got[k] != want {
			t.Errorf("pod %s right after create: label %s = %q, want %q", sb.ContainerID, k, got[k], want)
		}
	}
}

// clientset is a client of the test cluster, for looking at what the
// backend made.
func clientset(t *testing.T) *k8s.Clientset {
	t.Helper()
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	return k8s.NewForConfigOrDie(rc)
}

// inPod runs a shell line in the sandbox's pod through the backend.
func inPod(ctx context.Context, t *testing.T, be *kubernetes.Backend, cid, script string) string {
	t.Helper()
	var out bytes.Buffer
	if _, err := be.Exec(ctx, cid, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", script}, Stdout: &out}); err != nil {
		t.Fatalf("exec %q: %v", script, err)
	}
	return strings.TrimSpace(out.String())
}

// A python sandbox on the cluster, as its admin and with only the
// README's Role: run_code prints (through the command agent, which runs in
// the pod), a file is written and read back, copy_in and copy_out go
// through the host fences, hostile paths are refused, a cancelled
// command's child dies with it, and stop removes the pod.
func TestEngineOnCluster(t *testing.T) {
	for _, role := range []string{"admin", "README Role"} {
		t.Run(role, func(t *testing.T) { engineOnCluster(t, role != "admin") })
	}
}

func engineOnCluster(t *testing.T, readmeRole bool) {
	eng, be, cfg := clusterEngine(t, readmeRole)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "engine-cluster-test"})
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	contractLabelled(ctx, t, eng, be, sb.Sandbox)
	shutdownLeased(ctx, t, be, sb.Sandbox)
	run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "print(6 * 7)"})
	if err != nil || strings.TrimSpace(run.Stdout) != "42" || run.ExitCode != 0 {
		t.Fatalf("run_code = %+v, %v; want 42", run, err)
	}
	if got := inPod(ctx, t, be, sb.ContainerID, `grep -l `+agent.FilePrefix+` /proc/[0-9]*/cmdline 2>/dev/null | wc -l`); got == "0" {
		t.Errorf("no command agent (%s…) runs in the pod", agent.FilePrefix)
	}

	t.Run("files", func(t *testing.T) {
		if _, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "notes/a.txt", Content: []byte("hello\x00bytes")}); err != nil {
			t.Fatalf("WriteFile: %v", err)
		}
		r, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "notes/a.txt"})
		if err != nil || string(r.Data) != "hello\x00bytes" {
			t.Errorf("ReadFile = %q, %v", r.Data, err)
		}
	})
	t.Run("copy in and out", func(t *testing.T) {
		src := filepath.Join(cfg.Files.ReadRoots[0], "in.txt")
		if err := os.WriteFile(src, []byte("from the host\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: src}); err != nil {
			t.Fatalf("CopyIn: %v", err)
		}
		res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "cat in.txt; echo again >> in.txt"})
		if err != nil || res.Stdout != "from the host\n" {
			t.Fatalf("cat of the copied file = %+v, %v", res, err)
		}
		out, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "in.txt"})
		if err != nil {
			t.Fatalf("CopyOut: %v", err)
		}
		if !strings.HasPrefix(out.HostPath, cfg.Files.WriteRoot) {
			t.Errorf("copied out to %s, outside the write root %s", out.HostPath, cfg.Files.WriteRoot)
		}
		if b, err := os.ReadFile(out.HostPath); err != nil || string(b) != "from the host\nagain\n" {
			t.Errorf("the copied-out file: %q, %v", b, err)
		}
	})
	t.Run("hostile paths", func(t *testing.T) {
		hostileCopies(ctx, t, eng, sb.ID, cfg.Files.WriteRoot)
	})
	t.Run("cancel kills the child", func(t *testing.T) {
		cancelKillsChild(ctx, t, eng, be, sb.Sandbox)
	})
	t.Run("shell started ahead", func(t *testing.T) {
		shellAhead(ctx, t, eng, be, sb.Sandbox)
	})

	if _, err := eng.Stop(ctx, sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	// Stop removes in the background: gone within 60 s.
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, err = clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pod 60 s after stop: %v, want not found", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// hostileCopies: copy_out of a symlink to /etc/shadow, of a path that
// climbs out with .., and of a tree holding such a link: nothing of
// /etc/shadow or /etc/passwd reaches the host.
func hostileCopies(ctx context.Context, t *testing.T, eng *sandbox.Engine, id, writeRoot string) {
	if _, err := eng.Exec(ctx, id, sandbox.ExecRequest{Command: "mkdir -p tree && ln -sf /etc/shadow shadow && ln -sf /etc/passwd tree/pw && echo ok > tree/f"}); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"shadow", "../etc/passwd", "/workspace/../etc/passwd", "/etc/passwd"} {
		if res, err := eng.CopyOut(ctx, id, sandbox.CopyOutRequest{Path: p}); err == nil {
			t.Errorf("CopyOut(%q) = %+v, want refused", p, res)
		}
	}
	res, err := eng.CopyOut(ctx, id, sandbox.CopyOutRequest{Path: "tree"})
	if err != nil {
		t.Fatalf("CopyOut(tree): %v", err)
	}
	_ = filepath.WalkDir(writeRoot, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&os.ModeSymlink != 0 {
			t.Errorf("copy_out made a symlink on the host: %s", p)
		}
		if b, _ := os.ReadFile(p); bytes.Contains(b, []byte("root:")) {
			t.Errorf("the container's /etc reached the host: %s", p)
		}
		return nil
	})
	if res.Files != 1 {
		t.Errorf("CopyOut(tree) = %+v, want the one regular file", res)
	}
}

// cancelKillsChild: a command that forks a child, cancelled: both are gone
// from the pod.
func cancelKillsChild(ctx context.Context, t *testing.T, eng *sandbox.Engine, be *kubernetes.Backend, sb *sandbox.Sandbox) {
	cctx, cancel := context.WithCancel(ctx)
	started := make(chan struct{})
	var once bool
	done := make(chan error, 1)
	go func() {
		_, err := eng.Exec(cctx, sb.ID, sandbox.ExecRequest{
			Command: `sleep 1000 & echo $! > /tmp/child; echo $$ > /tmp/parent; echo started; wait`,
			Output: func(stream string, chunk []byte) {
				if !once && bytes.Contains(chunk, []byte("started")) {
					once = true
					close(started)
				}
			},
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("the command ended before it was cancelled: %v", err)
	}
	cancel()
	<-done
	script := `for i in $(seq 1 100); do a=; for p in $(cat /tmp/child /tmp/parent); do s=$(cut -d' ' -f3 /proc/$p/stat 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && a="$a $p"; done; [ -z "$a" ] && exit 0; sleep 0.1; done; echo $a`
	if a := inPod(ctx, t, be, sb.ContainerID, script); a != "" {
		t.Errorf("still running after the cancel: %s", a)
	}
}

// waitingShell waits for the agent to have one shell started ahead, and
// returns its pid.
func waitingShell(ctx context.Context, t *testing.T, be *kubernetes.Backend, cid string) string {
	t.Helper()
	var w []string
	for range 100 {
		if w = strings.Fields(inPod(ctx, t, be, cid, testenv.AheadShellsScript)); len(w) == 1 {
			return w[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("shells started ahead: %q, want one", w)
	return ""
}

// shellAhead: after a command the agent in the pod starts the next one's
// shell ahead, the next command runs in it (its $$), and one the
// sandbox's code kills is not used.
func shellAhead(ctx context.Context, t *testing.T, eng *sandbox.Engine, be *kubernetes.Backend, sb *sandbox.Sandbox) {
	if _, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "true"}); err != nil {
		t.Fatal(err)
	}
	pid := waitingShell(ctx, t, be, sb.ContainerID)
	res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "echo $$; exit 3"})
	if err != nil || res.Stdout != pid+"\n" || res.ExitCode != 3 {
		t.Errorf("in the shell started ahead (%s): %+v %v", pid, res, err)
	}
	pid = waitingShell(ctx, t, be, sb.ContainerID)
	inPod(ctx, t, be, sb.ContainerID, "kill -9 "+pid)
	res, err = eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "echo $0 $$"})
	if err != nil || res.Stdout == "/bin/sh "+pid+"\n" || !strings.HasPrefix(res.Stdout, "/bin/sh ") {
		t.Errorf("after the waiting shell (%s) was killed: %+v %v", pid, res, err)
	}
}
