package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

func TestDiscoverExtensions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		versions []string
		want     string // the version, or part of the error
	}{
		{"not installed", nil, ErrNoExtensions.Error()},
		{"v1beta1", []string{"v1beta1"}, "v1beta1"},
		{"both", []string{"v1alpha1", "v1beta1"}, "v1beta1"},
		{"only v1alpha1", []string{"v1alpha1"}, "serves extensions.agents.x-k8s.io [v1alpha1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
			for _, v := range tc.versions {
				lists = append(lists, &metav1.APIResourceList{GroupVersion: ExtensionsGroup + "/" + v,
					APIResources: []metav1.APIResource{{Name: "sandboxclaims"}, {Name: "sandboxtemplates"}, {Name: "sandboxwarmpools"}}})
			}
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: lists}}
			ext, err := DiscoverExtensions(d)
			got := ext.Claims.Version
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q (%v), want %q", got, err, tc.want)
			}
			if tc.want == ErrNoExtensions.Error() && !errors.Is(err, ErrNoExtensions) {
				t.Errorf("err = %v, want ErrNoExtensions", err)
			}
			if err == nil && (ext.Templates.Resource != "sandboxtemplates" || ext.WarmPools.Resource != "sandboxwarmpools" || ext.Claims.Group != ExtensionsGroup) {
				t.Errorf("resources %+v", ext)
			}
		})
	}
}

// A warm pool on the real cluster fills, a claim binds to one of its ready
// sandboxes fast (the time is printed; only a generous deadline is
// asserted), the claimed pod carries every hardening item and the claim's
// labels, agent-sandbox's policy for the template denies all traffic, and
// releasing the claim removes the pod.
func TestWarmPoolOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	w := testWarmPools(t, cs, cfg, ns)
	spec, tmpl := poolTemplate(t, ns)
	pool := PoolName("busybox")
	// Ensuring twice is no error (the second merges the same spec).
	for range 2 {
		if err := w.Ensure(ctx, pool, tmpl, 2); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	waitPoolReady(ctx, t, w, pool, 2)
	t.Logf("warm pool of 2 ready in %.1f s", time.Since(start).Seconds())

	for i := range 2 {
		id := fmt.Sprintf("warm%d", i)
		cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
		start = time.Now()
		c, err := w.Claim(cctx, pool, "claim-"+id, map[string]string{backend.LabelID: id}, map[string]string{backend.LabelID: id}, time.Now().Add(5*time.Minute))
		took := time.Since(start)
		ccancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("claim %d bound to sandbox %s (pod %s) in %d ms", i, c.Sandbox, c.Pod, took.Milliseconds())
		checkClaimedPod(ctx, t, cs, c, spec, id)
	}
	if err := w.Release(ctx, "claim-warm0"); err != nil {
		t.Fatal(err)
	}
	waitGone(ctx, t, cs, ns, "warm0")

	// A claim agent-sandbox refuses fails at once with its reason, and is
	// deleted.
	waitPoolReady(ctx, t, w, pool, 1)
	cctx, ccancel := context.WithTimeout(ctx, 30*time.Second)
	defer ccancel()
	_, err := w.Claim(cctx, pool, "claim-bad", map[string]string{"bad key": "x"}, nil, time.Now().Add(time.Minute))
	if err == nil || !strings.Contains(err.Error(), "agent-sandbox refuses the claim") || cctx.Err() != nil {
		t.Errorf("a refused claim: %v (ctx %v)", err, cctx.Err())
	}
	if _, err := w.dyn.Resource(w.ext.Claims).Namespace(ns).Get(ctx, "claim-bad", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the refused claim is still there: %v", err)
	}
}

// waitPoolReady polls the pool until it has n ready sandboxes (3 minutes
// at most: a cold node pulls nothing, but gVisor pods take seconds each).
func waitPoolReady(ctx context.Context, t *testing.T, w *WarmPools, pool string, n int) {
	t.Helper()
	deadline := time.Now().Add(3 * time.Minute)
	for {
		ready, err := w.Ready(ctx, pool)
		if err == nil && ready >= n {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("warm pool %s: %d ready after 3 minutes (err %v), want %d", pool, ready, err, n)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// testWarmPools is the warm pools of namespace ns on the test cluster,
// made without a Backend.
func testWarmPools(t *testing.T, cs *kubernetes.Clientset, cfg *rest.Config, ns string) *WarmPools {
	t.Helper()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	sandboxes, err := DiscoverAgentSandbox(cs.Discovery())
	if err != nil {
		t.Fatal(err)
	}
	ext, err := DiscoverExtensions(cs.Discovery())
	if err != nil {
		t.Fatalf("agent-sandbox's extensions on the test cluster: %v", err)
	}
	return NewWarmPools(dyn, sandboxes, ext, ns)
}

// poolTemplate is the tests' busybox pool template in ns (gVisor), and
// the spec it renders.
func poolTemplate(t *testing.T, ns string) (backend.ContainerSpec, *corev1.Pod) {
	t.Helper()
	spec := testSpec()
	spec.Labels = map[string]string{backend.LabelManaged: "true", backend.LabelID: "template"}
	tmpl, err := Pod(spec, Options{Namespace: ns, RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	return spec, tmpl
}

// checkClaimedPod: the claimed pod runs with every hardening item, gets the
// claim's id label (within 30 s), and agent-sandbox's policy for it denies
// all ingress and egress.
func checkClaimedPod(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, c Claimed, spec backend.ContainerSpec, id string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var pod *corev1.Pod
	for {
		p, err := cs.CoreV1().Pods(c.Namespace).Get(ctx, c.Pod, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning && p.Labels[ClaimLabel(backend.LabelID)] == id && p.Annotations[backend.LabelID] == id {
			pod = p
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("claimed pod %s: not running with label and annotation %s=%s after 30 s (err %v)", c.Pod, backend.LabelID, id, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The pool's deny-all policy, made before its pods, is the claimed
	// pod's (it selects the pool's label; the claim adds no policy).
	np, err := cs.NetworkingV1().NetworkPolicies(pod.Namespace).Get(ctx, DenyAllName(pod.Labels[LabelWarmPool]), metav1.GetOptions{})
	if err != nil {
		t.Fatalf("the claimed pod's pool policy: %v", err)
	}
	if p := hardeningProblems(pod, np, spec); len(p) > 0 {
		t.Errorf("the claimed pod lacks: %s", strings.Join(p, "; "))
	}
	nps, err := cs.NetworkingV1().NetworkPolicies(pod.Namespace).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !deniedByPolicy(pod, nps.Items) {
		t.Errorf("no NetworkPolicy denies all ingress and egress of the claimed pod (labels %v; policies %+v)", pod.Labels, nps.Items)
	}
}

// deniedByPolicy reports whether one of nps selects pod, by labels alone,
// for both directions and allows nothing.
func deniedByPolicy(pod *corev1.Pod, nps []networkingv1.NetworkPolicy) bool {
	for _, np := range nps {
		sel := np.Spec.PodSelector
		if len(sel.MatchExpressions) > 0 || len(sel.MatchLabels) == 0 {
			continue
		}
		match := true
		for k, v := range sel.MatchLabels {
			match = match && pod.Labels[k] == v
		}
		if match && slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) &&
			slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) &&
			len(np.Spec.Ingress) == 0 && len(np.Spec.Egress) == 0 {
			return true
		}
	}
	return false
}

// waitGone polls until the pods of sandbox id are gone (60 s at most).
func waitGone(ctx context.Context, t *testing.T, cs *kubernetes.Clientset, ns, id string) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		pods, err := cs.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: ClaimLabel(backend.LabelID) + "=" + id})
		if err == nil && len(pods.Items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("sandbox %s released: its pod still there after 60 s (err %v)", id, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// What a warm pool's template holds is what every sandbox shares; the
// sandbox's own labels and annotations (id, owner, installation, client,
// expiry, name) go with its claim, and the name is no part of the template.
func TestSplitShared(t *testing.T) {
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{
		Name: "mcp-sandbox-abc",
		Labels: map[string]string{
			backend.LabelManaged: "true", "io.mcp-sandbox.language": "python", "io.mcp-sandbox.installation": "i1",
			backend.LabelID: "abc", backend.LabelOwner: "o1", "io.mcp-sandbox.client": "c",
		},
		Annotations: map[string]string{
			backend.LabelID: "abc", "io.mcp-sandbox.expires-at": "2030-01-01T00:00:00Z",
			AnnotationName: "n", AnnotationRuntime: "runsc", AnnotationAgentSandbox: "true",
		},
	}}
	tmpl, labels, annotations := splitShared(pod)
	if tmpl.Name != "" || pod.Name == "" {
		t.Errorf("template name %q (pod %q), want none and the pod's kept", tmpl.Name, pod.Name)
	}
	for _, c := range []struct {
		what string
		got  map[string]string
		want []string
	}{
		{"template labels", tmpl.Labels, []string{backend.LabelManaged, "io.mcp-sandbox.language"}},
		{"template annotations", tmpl.Annotations, []string{AnnotationAgentSandbox, AnnotationRuntime}},
		{"claim labels", labels, []string{"io.mcp-sandbox.client", "io.mcp-sandbox.installation", backend.LabelID, backend.LabelOwner}},
		{"claim annotations", annotations, []string{AnnotationName, backend.LabelID, "io.mcp-sandbox.expires-at"}},
	} {
		if got := slices.Sorted(maps.Keys(c.got)); !slices.Equal(got, slices.Sorted(slices.Values(c.want))) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	if len(pod.Labels) != 6 || len(pod.Annotations) != 5 {
		t.Errorf("splitShared changed the pod: %v %v", pod.Labels, pod.Annotations)
	}
}

// A pod of a warm pool is a sandbox once claimed; its claim and Sandbox
// are read off it, and a claim name that is no object name is refused.
func TestClaimedPod(t *testing.T) {
	for _, c := range []struct {
		labels, annotations map[string]string
		unclaimed           bool
		claim, sandbox      string
		wantErr             bool
	}{
		{labels: map[string]string{LabelWarmPool: "p"}, unclaimed: true},
		{labels: map[string]string{LabelWarmPool: "p"}, annotations: map[string]string{AnnotationClaim: "c1"}, claim: "c1", sandbox: "sb1"},
		{annotations: map[string]string{AnnotationClaim: "../x"}, wantErr: true},
		{},
	} {
		pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p1", Labels: c.labels, Annotations: c.annotations,
			OwnerReferences: []metav1.OwnerReference{{Kind: "Sandbox", Name: "sb1"}}}}
		if got := unclaimed(pod); got != c.unclaimed {
			t.Errorf("%v %v: unclaimed %v, want %v", c.labels, c.annotations, got, c.unclaimed)
		}
		claim, sb, err := claimed(pod)
		if (err != nil) != c.wantErr || (err == nil && (claim != c.claim || (claim != "" && sb != c.sandbox))) {
			t.Errorf("%v: claimed = %q, %q, %v; want %q, %q, error %v", c.annotations, claim, sb, err, c.claim, c.sandbox, c.wantErr)
		}
	}
}
