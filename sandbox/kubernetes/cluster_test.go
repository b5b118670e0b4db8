package kubernetes

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/remotecommand"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
)

// clusterEnv names the kubeconfig of a real cluster to test against (the
// one .ci/k8s-up prints); without it the real-cluster tests skip.
const clusterEnv = "MCP_SANDBOX_TEST_KUBECONFIG"

func testCluster(t *testing.T) (*kubernetes.Clientset, *rest.Config) {
	t.Helper()
	path := os.Getenv(clusterEnv)
	if path == "" {
		t.Skipf("%s is not set (.ci/k8s-up prints a kubeconfig)", clusterEnv)
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", path)
	if err != nil {
		t.Fatalf("kubeconfig %s: %v", path, err)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, cfg
}

// testNamespace makes a namespace of its own for the test, deleted after it
// (named $MCP_SANDBOX_TEST_NAMESPACE_PREFIX, else mcp-sandbox-test-, and a
// random suffix).
func testNamespace(ctx context.Context, t *testing.T, cs *kubernetes.Clientset) string {
	t.Helper()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	prefix := "mcp-sandbox-test-"
	if p := os.Getenv("MCP_SANDBOX_TEST_NAMESPACE_PREFIX"); p != "" {
		prefix = p // a session's own, among others on the same cluster
	}
	ns := prefix + hex.EncodeToString(b)
	_, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
	})
	return ns
}

// waitRunning polls the pod until it runs (or fails), for up to 90 s.
func waitRunning(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, ns, name string) *corev1.Pod {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		p, err := cs.CoreV1().Pods(ns).Get(ctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			return p
		}
		if err == nil && (p.Status.Phase == corev1.PodFailed || p.Status.Phase == corev1.PodSucceeded) {
			t.Fatalf("pod %s ended: %s %s", name, p.Status.Phase, p.Status.Message)
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not running after 90 s (err %v, status %+v)", name, err, p.Status)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// execIn runs argv in the pod's container through the exec subresource
// (WebSocket, falling back to SPDY) and returns its stdout and stderr.
func execIn(ctx context.Context, cs *kubernetes.Clientset, cfg *rest.Config, pod *corev1.Pod, argv ...string) (string, string, error) {
	req := cs.CoreV1().RESTClient().Post().Resource("pods").Namespace(pod.Namespace).Name(pod.Name).
		SubResource("exec").VersionedParams(&corev1.PodExecOptions{
		Container: ContainerName, Command: argv, Stdout: true, Stderr: true,
	}, scheme.ParameterCodec)
	ws, err := remotecommand.NewWebSocketExecutor(cfg, "GET", req.URL().String())
	if err != nil {
		return "", "", err
	}
	spdy, err := remotecommand.NewSPDYExecutor(cfg, "POST", req.URL())
	if err != nil {
		return "", "", err
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, httpstream.IsUpgradeFailure)
	if err != nil {
		return "", "", err
	}
	var out, errOut bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdout: &out, Stderr: &errOut})
	return out.String(), errOut.String(), err
}

// inside is what a sandbox pod must see from inside, one shell line each:
// the command prints "ok" when the item holds.
var inside = []struct{ name, script string }{
	{"runs as uid 1000", `[ "$(id -u)" = 1000 ] && echo ok`},
	{"no effective or permitted capabilities", `grep -Eq '^CapEff:[[:space:]]+0+$' /proc/self/status && grep -Eq '^CapPrm:[[:space:]]+0+$' /proc/self/status && echo ok`},
	// (Not by writing: the sandbox user cannot write to / anyway.)
	{"root filesystem mounted read-only", `grep -Eq '^[^ ]+ / [^ ]+ ro[ ,]' /proc/mounts && echo ok`},
	// Under gVisor the memory volumes show as 9p mounts of the host's
	// tmpfs, so their size is what tells: testSpec's 32 and 16 MiB.
	{"/workspace writable, 32 MiB", `touch /workspace/probe && [ "$(df -k /workspace | awk 'NR==2 {print $2}')" = 32768 ] && echo ok`},
	{"/tmp writable, 16 MiB", `touch /tmp/probe && [ "$(df -k /tmp | awk 'NR==2 {print $2}')" = 16384 ] && echo ok`},
	{"no service account token", `[ ! -e /var/run/secrets/kubernetes.io ] && echo ok`},
	// The namespace has a service named probe (made before the pods): with
	// service links, its address would be in the environment.
	{"no service links", `env | grep -q '^PROBE_SERVICE_HOST=' || echo ok`},
}

// A sandbox pod, created on a real cluster, carries every hardening item
// as the API server stored it, and holds them from inside, under the
// cluster's default runtime and under gVisor.
func TestPodHardeningOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel) // after the parallel subtests
	ns := testNamespace(ctx, t, cs)
	probe := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: "probe"},
		Spec:       corev1.ServiceSpec{Ports: []corev1.ServicePort{{Port: 80}}},
	}
	if _, err := cs.CoreV1().Services(ns).Create(ctx, probe, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, rc := range []string{"", "gvisor"} {
		t.Run("runtimeClass="+rc, func(t *testing.T) {
			t.Parallel()
			spec := testSpec()
			id := "t" + strings.ReplaceAll(rc, "gvisor", "g") + fmt.Sprint(time.Now().UnixNano()%1e6)
			spec.Name, spec.Labels = backend.NamePrefix+id, map[string]string{backend.LabelManaged: "true", backend.LabelID: id}
			pod, err := Pod(spec, Options{Namespace: ns, RuntimeClass: rc})
			if err != nil {
				t.Fatal(err)
			}
			np := DenyAll(pod)
			if np, err = cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, np, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			if _, err = cs.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
				t.Fatal(err)
			}
			stored := waitRunning(ctx, t, cs, ns, pod.Name)
			if p := hardeningProblems(stored, np, spec); len(p) > 0 {
				t.Errorf("the pod as stored lacks: %s", strings.Join(p, "; "))
			}
			backendtest.CompareHardening(t, hardeningOf(spec), readPod(stored, np), notOnAPod)
			for _, c := range inside {
				out, errOut, err := execIn(ctx, cs, cfg, stored, "/bin/sh", "-c", c.script)
				if strings.TrimSpace(out) != "ok" {
					t.Errorf("%s: out %q err %q (%v)", c.name, out, errOut, err)
				}
			}
		})
	}
}

// With agent-sandbox installed, a sandbox made as a Sandbox object (of the
// version discovery finds) runs as a pod with every hardening item, and
// the cluster itself deletes it, pod and all, at its shutdownTime: no
// server needs to be alive for the expiry.
func TestAgentSandboxOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	gvr, err := DiscoverAgentSandbox(cs.Discovery())
	if err != nil {
		t.Fatalf("agent-sandbox on the test cluster: %v", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ns := testNamespace(ctx, t, cs)
	spec := testSpec()
	pod, err := Pod(spec, Options{Namespace: ns, RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	np, err := cs.NetworkingV1().NetworkPolicies(ns).Create(ctx, DenyAll(pod), metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	expires := time.Now().Add(10 * time.Second)
	sb, err := AgentSandbox(gvr, pod, expires)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := dyn.Resource(gvr).Namespace(ns).Create(ctx, sb, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	stored := waitRunning(ctx, t, cs, ns, pod.Name)
	if p := hardeningProblems(stored, np, spec); len(p) > 0 {
		t.Errorf("the Sandbox's pod lacks: %s", strings.Join(p, "; "))
	}
	backendtest.CompareHardening(t, hardeningOf(spec), readPod(stored, np), notOnAPod)
	if out, _, err := execIn(ctx, cs, cfg, stored, "/bin/sh", "-c", "id -u"); strings.TrimSpace(out) != "1000" {
		t.Errorf("id -u in the Sandbox's pod: %q (%v)", out, err)
	}
	// Gone within 60 s of its shutdownTime, the Sandbox and its pod.
	deadline := expires.Add(60 * time.Second)
	for {
		_, sbErr := dyn.Resource(gvr).Namespace(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		_, podErr := cs.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if apierrors.IsNotFound(sbErr) && apierrors.IsNotFound(podErr) {
			t.Logf("Sandbox and pod gone %.1f s after shutdownTime", time.Since(expires).Seconds())
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s after its shutdownTime: Sandbox err %v, pod err %v", sbErr, podErr)
		}
		time.Sleep(500 * time.Millisecond)
	}
}
