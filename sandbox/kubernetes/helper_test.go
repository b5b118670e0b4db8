package kubernetes

import (
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// testHelper is a sandbox pod (as the cluster stored it: with a UID) and
// the HelperSpec of an install for it.
func testHelper(t *testing.T, network string) (*corev1.Pod, backend.HelperSpec) {
	t.Helper()
	sandbox, err := Pod(testSpec(), Options{Namespace: "ns", RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	sandbox.UID = "sandbox-uid"
	sandbox.Annotations[AnnotationRuntime] = "runsc"
	return sandbox, backend.HelperSpec{
		Image: "mcp-sandbox-test/python:3", Cmd: []string{"pip", "install"}, Env: []string{"PIP_INDEX_URL=http://x"},
		User: "65533:65533", Network: network, MemoryBytes: 512 << 20, NanoCPUs: 1e9, Pids: 256,
		Labels: map[string]string{
			backend.LabelManaged: "true", backend.LabelHelper: "abc123", backend.LabelID: "abc123-install",
			backend.LabelOwner: "owner-1",
		},
		WorkspaceMB: 32, CacheDir: "/cache", Collect: ".local",
	}
}

func selects(t *testing.T, np *networkingv1.NetworkPolicy, pod *corev1.Pod) bool {
	t.Helper()
	sel, err := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
	if err != nil {
		t.Fatal(err)
	}
	return np.Namespace == pod.Namespace && sel.Matches(labels.Set(pod.Labels))
}

// The helper pod has every hardening item of a sandbox pod (its own
// memory volumes, the sandbox's RuntimeClass), belongs to the sandbox's
// pod, ends by its deadline, and its policy selects it alone: the
// sandbox's deny-all policy does not select the helper, and the helper's
// policy (which may allow egress) never selects the sandbox.
func TestHelperPod(t *testing.T) {
	for _, network := range []string{"egress", "none"} {
		t.Run(network, func(t *testing.T) {
			sandbox, spec := testHelper(t, network)
			pod, np, err := HelperPod(sandbox, spec, "mcp-sandbox-helper-1", 10*time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			cs := backend.ContainerSpec{MemoryBytes: spec.MemoryBytes, NanoCPUs: spec.NanoCPUs, WorkspaceMB: spec.WorkspaceMB, TmpMB: helperTmpMB}
			for _, it := range hardeningItems {
				if it.name == "no host paths, only the two memory volumes" || it.name == "deny-all NetworkPolicy (ingress and egress) selecting the pod" {
					continue // checked below: the helper has a third volume and its own policy
				}
				if !it.check(pod, np, cs) {
					t.Errorf("the helper pod lacks %s", it.name)
				}
			}
			if len(pod.Spec.Volumes) != 3 || len(box(pod).VolumeMounts) != 3 || !memoryDir(pod, "/cache", spec.WorkspaceMB) {
				t.Errorf("volumes %+v, mounts %+v; want the workspace, /tmp and /cache as memory emptyDirs", pod.Spec.Volumes, box(pod).VolumeMounts)
			}
			if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName != "gvisor" || pod.Annotations[AnnotationRuntime] != "runsc" {
				t.Errorf("runtime class %v (%q), want the sandbox's gvisor", pod.Spec.RuntimeClassName, pod.Annotations[AnnotationRuntime])
			}
			if o := pod.OwnerReferences; len(o) != 1 || o[0].Kind != "Pod" || o[0].Name != sandbox.Name || o[0].UID != sandbox.UID {
				t.Errorf("owner references %+v, want the sandbox's pod", o)
			}
			if o := np.OwnerReferences; len(o) != 1 || o[0].UID != sandbox.UID {
				t.Errorf("policy owner references %+v before the helper exists, want the sandbox's pod", o)
			}
			if d := pod.Spec.ActiveDeadlineSeconds; d == nil || *d != 600 {
				t.Errorf("activeDeadlineSeconds %v, want 600", d)
			}
			if pod.Labels[backend.LabelHelper] != "abc123" || pod.Labels[backend.LabelOwner] != "owner-1" || box(pod).Image != spec.Image ||
				pod.Annotations[AnnotationUser] != "65533:65533" || *box(pod).SecurityContext.RunAsUser != 65533 || pod.Annotations[AnnotationNetwork] != network {
				t.Errorf("helper pod labels %v, annotations %v, image %s", pod.Labels, pod.Annotations, box(pod).Image)
			}
			if !selects(t, np, pod) || selects(t, np, sandbox) || selects(t, DenyAll(sandbox), pod) || !selects(t, DenyAll(sandbox), sandbox) {
				t.Errorf("helper policy selects helper %v, sandbox %v; sandbox policy selects helper %v",
					selects(t, np, pod), selects(t, np, sandbox), selects(t, DenyAll(sandbox), pod))
			}
			if len(np.Spec.PodSelector.MatchLabels) != 1 || np.Spec.PodSelector.MatchLabels[LabelHelperPod] != pod.Name || len(np.Spec.PodSelector.MatchExpressions) != 0 {
				t.Errorf("helper policy selector %+v, want the helper pod's name label alone", np.Spec.PodSelector)
			}
			wantEgress := 0
			if network == "egress" {
				wantEgress = 1
			}
			if len(np.Spec.Ingress) != 0 || len(np.Spec.Egress) != wantEgress ||
				(wantEgress == 1 && (len(np.Spec.Egress[0].To) != 0 || len(np.Spec.Egress[0].Ports) != 0)) ||
				!slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeIngress) || !slices.Contains(np.Spec.PolicyTypes, networkingv1.PolicyTypeEgress) {
				t.Errorf("helper policy %+v: want ingress denied and egress %s", np.Spec, network)
			}
		})
	}
}

func TestHelperPodRefuses(t *testing.T) {
	for _, c := range []struct {
		name string
		edit func(*backend.HelperSpec)
	}{
		{"empty command", func(s *backend.HelperSpec) { s.Cmd = nil }},
		{"other network", func(s *backend.HelperSpec) { s.Network = "host" }},
		{"cache over the workspace", func(s *backend.HelperSpec) { s.CacheDir = "/workspace/" }},
		{"relative cache", func(s *backend.HelperSpec) { s.CacheDir = "cache" }},
		{"root", func(s *backend.HelperSpec) { s.User = "0:0" }},
		{"no memory limit", func(s *backend.HelperSpec) { s.MemoryBytes = 0 }},
		{"no id label", func(s *backend.HelperSpec) { delete(s.Labels, backend.LabelID) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			sandbox, spec := testHelper(t, "egress")
			c.edit(&spec)
			if _, _, err := HelperPod(sandbox, spec, "mcp-sandbox-helper-1", time.Minute); err == nil {
				t.Error("HelperPod accepted it")
			}
		})
	}
}
