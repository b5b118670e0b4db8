package kubernetes_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"os"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// With kubernetes.warm_pool = {python = 1}, the engine's python sandboxes
// are claimed from the language's SandboxWarmPool (the claim time is
// printed; none is asserted): run_code runs in the claimed pod, List
// shows it with the contract labels (and no unclaimed pod of the pool),
// Rename and Expire act on it, and Stop removes its claim and pod.
func TestWarmPoolEngineOnCluster(t *testing.T) {
	eng, be, _ := clusterEngineWith(t, kubernetes.Config{UseAgentSandbox: "auto", RuntimeClass: "gvisor", WarmPool: map[string]int{"python": 1}})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	rc, err := clientcmd.BuildConfigFromFlags("", os.Getenv("MCP_SANDBOX_TEST_KUBECONFIG"))
	if err != nil {
		t.Fatal(err)
	}
	pools, err := be.WarmPools()
	if err != nil {
		t.Fatal(err)
	}
	ext, err := kubernetes.DiscoverExtensions(clientset(t).Discovery())
	if err != nil {
		t.Fatal(err)
	}
	claims := dynamic.NewForConfigOrDie(rc).Resource(ext.Claims).Namespace(be.Namespace())

	// The first create makes the pool (and, none being ready yet, a
	// Sandbox of its own).
	first, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "warm-pool-test"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := eng.Stop(ctx, first.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	var ids []*sandbox.Sandbox
	for i := range 2 {
		waitReady(ctx, t, pools, kubernetes.PoolName("python")) // it refills after each claim
		start := time.Now()
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python", Client: "warm-pool-test"})
		if err != nil {
			t.Fatalf("Create %d: %v", i, err)
		}
		t.Logf("sandbox %d claimed from the warm pool and running in %d ms (pod %s)", i, time.Since(start).Milliseconds(), sb.ContainerID)
		ids = append(ids, sb.Sandbox)
		contractLabelled(ctx, t, eng, be, sb.Sandbox)
		pod, err := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		claim := pod.Annotations[kubernetes.AnnotationClaim]
		if claim == "" || pod.Labels[kubernetes.LabelWarmPool] != kubernetes.PoolName("python") {
			t.Fatalf("sandbox %d: pod %s is not from the warm pool (labels %v, annotations %v)", i, pod.Name, pod.Labels, pod.Annotations)
		}
		run, err := eng.RunCode(ctx, sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "print(6 * 7)"})
		if err != nil || strings.TrimSpace(run.Stdout) != "42" {
			t.Fatalf("run_code in the claimed sandbox = %+v, %v; want 42", run, err)
		}
	}

	all, err := be.List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The first sandbox, stopped, may still be going: claims are quick.
	list := slices.DeleteFunc(all, func(c backend.ContainerInfo) bool { return c.State == "removing" })
	if len(list) != len(ids) {
		t.Errorf("List: %d sandboxes, want the %d claimed (an unclaimed pool pod is no sandbox): %+v", len(list), len(ids), list)
	}
	for _, sb := range ids {
		c, err := be.Inspect(ctx, sb.ContainerID)
		if err != nil {
			t.Fatal(err)
		}
		for k, want := range map[string]string{
			backend.LabelManaged: "true", backend.LabelOwner: eng.Owner(), backend.LabelLanguage: "python",
			backend.LabelClient: "warm-pool-test",
		} {
			if c.Labels[k] != want {
				t.Errorf("claimed sandbox %s: label %s = %q, want %q (labels %v)", sb.ID, k, c.Labels[k], want, c.Labels)
			}
		}
		if c.Labels[backend.LabelID] == "" || c.Labels[backend.LabelExpiresAt] == "" {
			t.Errorf("claimed sandbox %s: no id or expiry label: %v", sb.ID, c.Labels)
		}
	}

	// agent-sandbox's later sync of the claim's metadata leaves the
	// contract labels on the pod.
	claimSynced(ctx, t, be, ids[0].ContainerID)
	contractLabelled(ctx, t, eng, be, ids[0])

	sb := ids[0]
	if err := be.Rename(ctx, sb.ContainerID, "renamed-warm"); err != nil {
		t.Fatalf("Rename: %v", err)
	}
	if c, err := be.Inspect(ctx, sb.ContainerID); err != nil || c.Name != "renamed-warm" {
		t.Errorf("after Rename: %+v, %v", c, err)
	}
	// agent-sandbox copies the claim's pod annotations onto the pod again
	// (at its next sync): the claim must carry the new name.
	pod0, err := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	u0, err := claims.Get(ctx, pod0.Annotations[kubernetes.AnnotationClaim], metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if v, _, _ := unstructured.NestedString(u0.Object, "spec", "additionalPodMetadata", "annotations", kubernetes.AnnotationName); v != "renamed-warm" {
		t.Errorf("after Rename: the claim gives its pod the name %q, want renamed-warm", v)
	}
	at := time.Now().Add(3 * time.Hour).Truncate(time.Second)
	if err := be.Expire(ctx, sb.ContainerID, at); err != nil {
		t.Fatalf("Expire: %v", err)
	}
	pod, err := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, sb.ContainerID, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	claim := pod.Annotations[kubernetes.AnnotationClaim]
	u, err := claims.Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// Three hours ahead, the shutdownTime is a lease ahead (renewed while
	// the server lives).
	v, _, _ := unstructured.NestedString(u.Object, "spec", "lifecycle", "shutdownTime")
	if got, err := time.Parse(time.RFC3339, v); err != nil || time.Until(got) <= 0 || time.Until(got) > kubernetes.DefaultLease+5*time.Second {
		t.Errorf("after Expire: the claim's shutdownTime is %q, want a lease (%v) ahead", v, kubernetes.DefaultLease)
	}

	for _, sb := range ids {
		if _, err := eng.Stop(ctx, sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatalf("Stop: %v", err)
		}
	}
	for _, sb := range ids {
		claimGone(ctx, t, claims, sb.ContainerID, be)
	}
}

// claimSynced waits (60 s at most) until agent-sandbox copied the claim's
// labels onto the pod (its list of propagated labels names them).
func claimSynced(ctx context.Context, t *testing.T, be *kubernetes.Backend, pod string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		p, err := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, pod, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(p.Annotations["agents.x-k8s.io/propagated-labels"], kubernetes.ClaimLabel(backend.LabelID)) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s: agent-sandbox did not copy its claim's labels within 60 s (annotations %v)", pod, p.Annotations)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// claimGone waits (60 s at most) until the claimed sandbox's pod and its
// claim are gone.
func claimGone(ctx context.Context, t *testing.T, claims dynamic.ResourceInterface, pod string, be *kubernetes.Backend) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		_, perr := clientset(t).CoreV1().Pods(be.Namespace()).Get(ctx, pod, metav1.GetOptions{})
		list, cerr := claims.List(ctx, metav1.ListOptions{})
		if apierrors.IsNotFound(perr) && cerr == nil && !claimFor(list, pod) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("60 s after stop: pod %s: %v; claims %d (%v)", pod, perr, len(list.Items), cerr)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// claimFor reports whether a claim of list is bound to pod's sandbox.
func claimFor(list *unstructured.UnstructuredList, pod string) bool {
	for _, u := range list.Items {
		if name, _, _ := unstructured.NestedString(u.Object, "status", "sandbox", "name"); name == pod {
			return true
		}
	}
	return false
}

// waitReady polls the pool until it has a ready sandbox (3 minutes at
// most).
func waitReady(ctx context.Context, t *testing.T, w *kubernetes.WarmPools, pool string) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		n, err := w.Ready(ctx, pool)
		if err == nil && n >= 1 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm pool %s: none ready after 3 minutes (err %v)", pool, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
