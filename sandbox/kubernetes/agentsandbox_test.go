package kubernetes

import (
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	clienttesting "k8s.io/client-go/testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
)

func TestDiscoverAgentSandbox(t *testing.T) {
	served := func(versions ...string) []*metav1.APIResourceList {
		lists := []*metav1.APIResourceList{{GroupVersion: "v1", APIResources: []metav1.APIResource{{Name: "pods"}}}}
		for _, v := range versions {
			lists = append(lists, &metav1.APIResourceList{GroupVersion: AgentSandboxGroup + "/" + v,
				APIResources: []metav1.APIResource{{Name: "sandboxes", Kind: "Sandbox"}}})
		}
		return lists
	}
	for _, tc := range []struct {
		name     string
		versions []string
		want     string // the version, or part of the error
	}{
		{"not installed", nil, ErrNoAgentSandbox.Error()},
		{"v1beta1", []string{"v1beta1"}, "v1beta1"},
		{"both", []string{"v1alpha1", "v1beta1"}, "v1beta1"},
		{"only v1alpha1", []string{"v1alpha1"}, "serves agents.x-k8s.io [v1alpha1]"},
		{"only a later one", []string{"v1"}, "serves agents.x-k8s.io [v1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{Resources: served(tc.versions...)}}
			gvr, err := DiscoverAgentSandbox(d)
			got := gvr.Version
			if err != nil {
				got = err.Error()
			}
			if !strings.Contains(got, tc.want) {
				t.Errorf("got %q (%v), want %q", got, err, tc.want)
			}
			if tc.want == ErrNoAgentSandbox.Error() && !errors.Is(err, ErrNoAgentSandbox) {
				t.Errorf("err = %v, want ErrNoAgentSandbox", err)
			}
		})
	}
}

// sandboxPod reads the pod template back out of a Sandbox object.
func sandboxPod(t *testing.T, u *unstructured.Unstructured) *corev1.Pod {
	t.Helper()
	tmpl, _, _ := unstructured.NestedMap(u.Object, "spec", "podTemplate")
	spec, _, _ := unstructured.NestedMap(tmpl, "spec")
	labels, _, _ := unstructured.NestedStringMap(tmpl, "metadata", "labels")
	p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: u.GetName(), Namespace: u.GetNamespace(), Labels: labels}}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(spec, &p.Spec); err != nil {
		t.Fatal(err)
	}
	return p
}

// The Sandbox carries the pod's spec unchanged (every hardening item), its
// labels, and its expiry with the Delete policy.
func TestAgentSandboxObject(t *testing.T) {
	spec := testSpec()
	pod, err := Pod(spec, Options{Namespace: "ns", RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	gvr := schema.GroupVersionResource{Group: AgentSandboxGroup, Version: "v1beta1", Resource: "sandboxes"}
	expires := time.Date(2026, 11, 25, 22, 30, 0, 0, time.UTC)
	u, err := AgentSandbox(gvr, pod, expires)
	if err != nil {
		t.Fatal(err)
	}
	if u.GetAPIVersion() != "agents.x-k8s.io/v1beta1" || u.GetKind() != "Sandbox" || u.GetName() != pod.Name || u.GetNamespace() != "ns" {
		t.Errorf("object %s %s %s/%s", u.GetAPIVersion(), u.GetKind(), u.GetNamespace(), u.GetName())
	}
	if st, _, _ := unstructured.NestedString(u.Object, "spec", "shutdownTime"); st != "2026-11-25T22:30:00Z" {
		t.Errorf("shutdownTime = %q", st)
	}
	if sp, _, _ := unstructured.NestedString(u.Object, "spec", "shutdownPolicy"); sp != "Delete" {
		t.Errorf("shutdownPolicy = %q", sp)
	}
	back := sandboxPod(t, u)
	if p := hardeningProblems(back, DenyAll(pod), spec); len(p) > 0 {
		t.Errorf("the Sandbox's pod template lacks: %s", strings.Join(p, "; "))
	}
	backendtest.CompareHardening(t, hardeningOf(spec), readPod(back, DenyAll(pod)), notOnAPod)
	if back.Labels["io.mcp-sandbox.id"] != "abc123" || u.GetAnnotations()["io.mcp-sandbox.expires-at"] == "" {
		t.Errorf("labels %v annotations %v", back.Labels, u.GetAnnotations())
	}
}
