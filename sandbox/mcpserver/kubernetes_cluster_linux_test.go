package mcpserver_test

// The real server with backend.kind = "kubernetes", on the test cluster
// MCP_SANDBOX_TEST_KUBECONFIG names (skipped without it): the MCP clients
// over stdio, and a server killed with its watchdog whose sandbox the
// cluster removes by itself.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	k8s "k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// sandboxes is agent-sandbox v0.5.0's Sandbox resource, which the test
// cluster serves.
var sandboxes = schema.GroupVersionResource{Group: "agents.x-k8s.io", Version: "v1beta1", Resource: "sandboxes"}

// kubeCluster is the test cluster, in a namespace of the test's own
// (deleted at its end).
type kubeCluster struct {
	kubeconfig, ns string
	cs             *k8s.Clientset
	dyn            *dynamic.DynamicClient
	// leaseSeconds is the servers' kubernetes.lease_seconds (0: default).
	leaseSeconds int
}

func testKube(t *testing.T) *kubeCluster {
	t.Helper()
	kc := os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG")
	if kc == "" {
		t.Skip("MCP_SANDBOX_TEST_KUBECONFIG is not set: no test cluster")
	}
	rc, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	k := &kubeCluster{kubeconfig: kc, cs: k8s.NewForConfigOrDie(rc), dyn: dynamic.NewForConfigOrDie(rc)}
	b := make([]byte, 4)
	rand.Read(b)
	k.ns = "mcpserver-" + hex.EncodeToString(b)
	ctx := context.Background()
	if _, err := k.cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: k.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { k.cs.CoreV1().Namespaces().Delete(context.Background(), k.ns, metav1.DeleteOptions{}) })
	return k
}

// env is the environment of a server on the cluster: backend.kind
// "kubernetes", agent-sandbox Sandboxes under the gvisor RuntimeClass.
func (k *kubeCluster) env(t *testing.T) []string {
	t.Helper()
	return k.envPool(t, 0)
}

// envPool is env with kubernetes.warm_pool = { python = size }.
func (k *kubeCluster) envPool(t *testing.T, size int) []string {
	t.Helper()
	return k.envWith(t, size, "")
}

// serverEnv is env with extraTOML at the end of the config: a backendEnv
// for the attacks that run on either backend.
func (k *kubeCluster) serverEnv(t *testing.T, extraTOML string) []string {
	t.Helper()
	return k.envWith(t, 0, extraTOML)
}

// envWith is envPool with extraTOML at the end of the config.
func (k *kubeCluster) envWith(t *testing.T, size int, extraTOML string) []string {
	t.Helper()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`[backend]
kind = "kubernetes"

[kubernetes]
kubeconfig = %q
namespace = %q
runtime_class = "gvisor"
use_agent_sandbox = "always"
warm_pool = { python = %d }
lease_seconds = %d

[images]
python = %q
pull = "never"

[pool]
size = 0
%s`, k.kubeconfig, k.ns, size, k.leaseSeconds, testenv.PythonImage, extraTOML)
	p := filepath.Join(dir, "config.toml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	os.MkdirAll(home, 0o700)
	return []string{
		"MCP_SANDBOX_CONFIG=" + p, "MCP_SANDBOX_STATE_DIR=" + filepath.Join(dir, "state"),
		"HOME=" + home, "PATH=" + os.Getenv("PATH"),
	}
}

// The official Go SDK client drives the real server on the cluster, with
// sandboxes of their own and claimed from a warm pool: tools/list,
// sandbox_create, run_code, the file tools, sandbox_exec, install_packages
// (a helper pod, gone when it returns), and sandbox_stop, which removes the
// pod.
func TestGoSDKClientOnCluster(t *testing.T) {
	for _, size := range []int{0, 1} {
		t.Run(fmt.Sprintf("warm_pool=%d", size), func(t *testing.T) { goSDKOnCluster(t, size) })
	}
}

func goSDKOnCluster(t *testing.T, warmPool int) {
	k := testKube(t)
	p := startServer(t, k.envPool(t, warmPool))
	sess := sdkClient(t, p, nil)
	ctx := testContext(t, 5*time.Minute)
	tools, err := sess.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, tool := range tools.Tools {
		names[tool.Name] = true
	}
	for _, want := range []string{"sandbox_create", "sandbox_exec", "run_code", "write_file", "read_file", "list_files", "sandbox_stop"} {
		if !names[want] {
			t.Errorf("tool %s missing", want)
		}
	}
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	if warmPool > 0 {
		// The first create makes the pool (and, none being ready, a
		// Sandbox of its own); the next one claims from it.
		res := call(t, sess, "sandbox_create", map[string]any{"language": "python"})
		structured(t, res, &created)
		if res.IsError {
			t.Fatalf("create: %s", text(res))
		}
		call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": created.SandboxID})
		k.waitPoolPod(ctx, t)
	}
	res := call(t, sess, "sandbox_create", map[string]any{"language": "python"})
	structured(t, res, &created)
	if res.IsError || created.SandboxID == "" {
		t.Fatalf("create: %s", text(res))
	}
	id := created.SandboxID
	pod := k.podOf(ctx, t, id)
	// A claim binds a ready pod of the pool.
	p0, err := k.cs.CoreV1().Pods(k.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if claimed := p0.Annotations["k8s.mcp-sandbox.io/claim"] != ""; claimed != (warmPool > 0) {
		t.Errorf("pod %s: claimed %v, want %v", pod, claimed, warmPool > 0)
	}

	var ex execOut
	res = call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": "print(2**10)"})
	structured(t, res, &ex)
	if res.IsError || ex.Stdout != "1024\n" {
		t.Errorf("run_code: %+v %s", ex, text(res))
	}
	if res = call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "d/a.txt", "content": "on the cluster"}); res.IsError {
		t.Errorf("write_file: %s", text(res))
	}
	var rf struct {
		Content string `json:"content"`
	}
	res = call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": "d/a.txt"})
	structured(t, res, &rf)
	if res.IsError || rf.Content != "on the cluster" {
		t.Errorf("read_file: %+v %s", rf, text(res))
	}
	res = call(t, sess, "list_files", map[string]any{"sandbox_id": id, "path": "d"})
	if res.IsError || !strings.Contains(text(res), "a.txt") {
		t.Errorf("list_files: %s", text(res))
	}
	res = call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "cat d/a.txt; echo oops >&2; exit 4"})
	structured(t, res, &ex)
	if res.IsError || ex.ExitCode != 4 || strings.TrimSpace(ex.Stdout) != "on the cluster" || ex.Stderr != "oops\n" {
		t.Errorf("sandbox_exec: %+v %s", ex, text(res))
	}
	// The install runs in a helper pod under the sandbox's gVisor class,
	// which on the CI cluster has no network: an error that says the index
	// could not be reached, with no helper pod or policy left behind.
	var inst struct {
		ExitCode int    `json:"exit_code"`
		Note     string `json:"note"`
	}
	res = call(t, sess, "install_packages", map[string]any{"sandbox_id": id, "packages": []string{"six"}})
	structured(t, res, &inst)
	if !res.IsError || !strings.Contains(inst.Note, "could not be reached") {
		t.Errorf("install_packages on Kubernetes: isError %v, %+v, %s; want an error about the network", res.IsError, inst, text(res))
	}
	helpers, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: "io.mcp-sandbox.helper"})
	if err != nil || len(helpers.Items) != 0 {
		t.Errorf("helper pods left after install_packages: %d, %v", len(helpers.Items), err)
	}
	policies, err := k.cs.NetworkingV1().NetworkPolicies(k.ns).List(ctx, metav1.ListOptions{LabelSelector: "k8s.mcp-sandbox.io/helper-pod"})
	if err != nil || len(policies.Items) != 0 {
		t.Errorf("helper policies left after install_packages: %d, %v", len(policies.Items), err)
	}
	if res = call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": id}); res.IsError {
		t.Fatalf("sandbox_stop: %s", text(res))
	}
	k.waitGone(ctx, t, pod, 60*time.Second)
}

// The MCP Inspector's CLI drives the real server on the cluster over
// stdio: tools/list, and a one-shot run_code in a pod.
func TestInspectorCLIOnCluster(t *testing.T) {
	k := testKube(t)
	bin := testenv.Inspector(t)
	srv := serverBin(t) // built before the clock starts
	env := k.env(t)
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--cli", srv, "serve"}, args...)...)
		cmd.Env = env
		cmd.Dir = filepath.Dir(bin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("--method", "tools/list")
	for _, name := range []string{"sandbox_create", "sandbox_exec", "run_code", "sandbox_stop"} {
		if !strings.Contains(out, `"name": "`+name+`"`) {
			t.Errorf("tools/list lacks %s:\n%s", name, out)
		}
	}
	out = run("--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "code=print(6*7)")
	if !strings.Contains(out, `--- stdout\n42\n`) {
		t.Errorf("run_code via inspector on the cluster:\n%s", out)
	}
}

// A server on the cluster and its watchdog SIGKILLed (the watchdog
// stopped first, so it cannot act): nothing of the installation is left
// running, and the cluster removes the sandbox's pod, Sandbox and
// NetworkPolicy at the Sandbox's shutdownTime, which the server had set
// (here moved to a few seconds from now, for the idle TTL's passing).
func TestServerSIGKILLOnCluster(t *testing.T) {
	k := testKube(t)
	p := startServer(t, k.env(t))
	sess := sdkClient(t, p, nil)
	ctx := testContext(t, 4*time.Minute)
	res := call(t, sess, "sandbox_create", map[string]any{"language": "python", "ttl_minutes": 1})
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &created)
	if res.IsError || created.SandboxID == "" {
		t.Fatalf("create: %s", text(res))
	}
	pod := k.podOf(ctx, t, created.SandboxID)
	m := watchdogPIDRe.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("the server logged no watchdog_pid:\n%s", p.stderr.String())
	}
	wd, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(wd, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the watchdog %d: %v", wd, err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(wd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for _, pid := range []int{p.cmd.Process.Pid, wd} {
		waitDead(t, pid)
	}

	sb, err := k.dyn.Resource(sandboxes).Namespace(k.ns).Get(ctx, pod, metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the Sandbox right after the kill: %v", err)
	}
	v, _, _ := unstructured.NestedString(sb.Object, "spec", "shutdownTime")
	at, err := time.Parse(time.RFC3339, v)
	if err != nil || time.Until(at) <= 0 || time.Until(at) > 10*time.Minute {
		t.Fatalf("the Sandbox's shutdownTime %q (%v): want the server's expiry, within minutes", v, err)
	}
	patch := fmt.Appendf(nil, `{"spec":{"shutdownTime":%q}}`, time.Now().Add(3*time.Second).UTC().Format(time.RFC3339))
	if _, err := k.dyn.Resource(sandboxes).Namespace(k.ns).Patch(ctx, pod, "application/merge-patch+json", patch, metav1.PatchOptions{}); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	k.waitGone(ctx, t, pod, 90*time.Second)
	t.Logf("pod, Sandbox and NetworkPolicy removed by the cluster %v after the shutdownTime was due", time.Since(start).Round(time.Second)-3*time.Second)
}

// A server and its watchdog both SIGKILLed, with no other server: the
// cluster removes their sandbox when its short lease ends (here 15 s; by
// default 3 minutes), not at its idle expiry half an hour away. While the
// server lives, it renews the lease: the sandbox outlives two leases.
func TestServerLeaseOnCluster(t *testing.T) {
	k := testKube(t)
	k.leaseSeconds = 15
	lease := time.Duration(k.leaseSeconds) * time.Second
	p := startServer(t, k.env(t))
	sess := sdkClient(t, p, nil)
	ctx := testContext(t, 4*time.Minute)
	res := call(t, sess, "sandbox_create", map[string]any{"language": "python"})
	var created struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &created)
	if res.IsError || created.SandboxID == "" {
		t.Fatalf("create: %s", text(res))
	}
	pod := k.podOf(ctx, t, created.SandboxID)
	time.Sleep(2 * lease)
	if res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": created.SandboxID, "command": "true"}); res.IsError {
		t.Fatalf("after two leases, with the server alive: %s", text(res))
	}
	m := watchdogPIDRe.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("the server logged no watchdog_pid:\n%s", p.stderr.String())
	}
	wd, _ := strconv.Atoi(m[1])
	if err := syscall.Kill(wd, syscall.SIGSTOP); err != nil {
		t.Fatalf("stop the watchdog %d: %v", wd, err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(wd, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	killed := time.Now()
	k.waitGone(ctx, t, pod, lease+90*time.Second)
	t.Logf("pod, Sandbox and NetworkPolicy removed by the cluster %v after the server and its watchdog died", time.Since(killed).Round(time.Second))
}

// podOf is the pod of the server's sandbox id (by its id label).
func (k *kubeCluster) podOf(ctx context.Context, t *testing.T, id string) string {
	t.Helper()
	pods, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: backend.LabelManaged})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pods.Items {
		if p.Annotations[backend.LabelID] == id {
			return p.Name
		}
	}
	t.Fatalf("no pod of sandbox %s among %d", id, len(pods.Items))
	return ""
}

// waitGone polls until the sandbox's pod, Sandbox and NetworkPolicy are
// gone, within d.
func (k *kubeCluster) waitGone(ctx context.Context, t *testing.T, name string, d time.Duration) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		_, perr := k.cs.CoreV1().Pods(k.ns).Get(ctx, name, metav1.GetOptions{})
		_, serr := k.dyn.Resource(sandboxes).Namespace(k.ns).Get(ctx, name, metav1.GetOptions{})
		_, nerr := k.cs.NetworkingV1().NetworkPolicies(k.ns).Get(ctx, name, metav1.GetOptions{})
		if apierrors.IsNotFound(perr) && apierrors.IsNotFound(serr) && apierrors.IsNotFound(nerr) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: pod %v, Sandbox %v, NetworkPolicy %v; want all gone", d, perr, serr, nerr)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// waitDead waits (10 s at most) until pid is gone or a zombie.
func waitDead(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil || strings.Contains(string(b), ") Z ") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d still alive after SIGKILL", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// The agent suite's tasks that apply on a cluster, done the same way
// against a server with backend.kind = "kubernetes": arithmetic, state, an
// allowed fetch, a web app started in the background and exposed, a long
// loop, a big output kept whole at output_file, and the clean-up.
func TestAgentTasksOnCluster(t *testing.T) {
	k := testKube(t)
	port := serveOn127002(t)
	p := startServer(t, k.serverEnv(t, fmt.Sprintf("[network]\nallow_domains = [\"127.0.0.2:%d\"]\n", port)))
	everyBackendTasks(t, &agent{t: t, sess: sdkClient(t, p, nil)}, port)
}

// TestProposeChangesOnCluster: propose_changes on the cluster (the
// sandbox's tree read through the backend's archive calls), Reject and
// Apply answered by elicitation, ~/.bashrc refused before asking.
func TestProposeChangesOnCluster(t *testing.T) {
	k := testKube(t)
	proposeOverStdio(t, k.env(t))
}

// waitPoolPod waits until the namespace's python warm pool has a ready,
// unclaimed pod.
func (k *kubeCluster) waitPoolPod(ctx context.Context, t *testing.T) {
	t.Helper()
	for {
		pods, err := k.cs.CoreV1().Pods(k.ns).List(ctx, metav1.ListOptions{LabelSelector: "io.mcp-sandbox.warm-pool=mcp-sandbox-python"})
		if err == nil {
			for _, p := range pods.Items {
				if p.Annotations["k8s.mcp-sandbox.io/claim"] == "" && p.DeletionTimestamp == nil && podReady(&p) {
					return
				}
			}
		}
		if ctx.Err() != nil {
			t.Fatalf("the warm pool has no ready pod: %v", err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
