package kubernetes

import (
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
)

func testSpec() backend.ContainerSpec {
	return backend.ContainerSpec{
		Name:   "mcp-sandbox-abc123",
		Image:  "mcp-sandbox-test/busybox:1",
		Labels: map[string]string{backend.LabelManaged: "true", backend.LabelID: "abc123", "io.mcp-sandbox.expires-at": "2026-11-25T22:00:00Z"},
		Env:    []string{"A=1", "B=x=y"},
		User:   "1000:1000", MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64,
		WorkspaceMB: 32, TmpMB: 16,
	}
}

// Every hardening item is on the pod Pod builds, and the check of each
// item fails on a pod without it (so the real-cluster test, which uses the
// same checks, can fail).
func TestPodHardening(t *testing.T) {
	spec := testSpec()
	pod, err := Pod(spec, Options{Namespace: "ns", RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	np := DenyAll(pod)
	if p := hardeningProblems(pod, np, spec); len(p) > 0 {
		t.Fatalf("the pod lacks: %s", strings.Join(p, "; "))
	}
	for _, it := range hardeningItems {
		t.Run(it.name, func(t *testing.T) {
			p, _ := Pod(spec, Options{Namespace: "ns"})
			n := DenyAll(p)
			it.breakIt(p, n)
			if it.check(p, n, spec) {
				t.Errorf("the check passes on a pod without %q", it.name)
			}
		})
	}
}

func TestPodShape(t *testing.T) {
	spec := testSpec()
	pod, err := Pod(spec, Options{Namespace: "ns", RuntimeClass: "gvisor"})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Spec.RuntimeClassName == nil || *pod.Spec.RuntimeClassName != "gvisor" {
		t.Errorf("runtimeClassName = %v", pod.Spec.RuntimeClassName)
	}
	if pod.Name != spec.Name || pod.Namespace != "ns" {
		t.Errorf("name %q namespace %q", pod.Name, pod.Namespace)
	}
	// A label value Kubernetes refuses is kept as an annotation only.
	if _, ok := pod.Labels["io.mcp-sandbox.expires-at"]; ok {
		t.Error("expires-at (with colons) became a label")
	}
	if pod.Annotations["io.mcp-sandbox.expires-at"] != "2026-11-25T22:00:00Z" || pod.Labels[backend.LabelID] != "abc123" {
		t.Errorf("labels %v annotations %v", pod.Labels, pod.Annotations)
	}
	if env := box(pod).Env; len(env) != 2 || env[1].Name != "B" || env[1].Value != "x=y" {
		t.Errorf("env = %v", env)
	}
	if p, _ := Pod(spec, Options{}); p.Spec.RuntimeClassName != nil {
		t.Errorf("runtimeClassName set without one configured: %v", *p.Spec.RuntimeClassName)
	}
}

// A spec a pod cannot honour is refused, never made into a weaker pod.
func TestPodRefuses(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*backend.ContainerSpec)
		want   string
	}{
		{"root user", func(s *backend.ContainerSpec) { s.User = "0:0" }, "never run as root"},
		{"named user", func(s *backend.ContainerSpec) { s.User = "sandbox" }, "not numeric"},
		{"host network", func(s *backend.ContainerSpec) { s.Network = "host" }, "none of none, allowlist or egress"},
		{"bridge network", func(s *backend.ContainerSpec) { s.Network = "bridge" }, "none of none, allowlist or egress"},
		{"install cache", func(s *backend.ContainerSpec) { s.CacheUser = "1001:1001" }, "not yet available"},
		{"bad name", func(s *backend.ContainerSpec) { s.Name = "Mcp_Sandbox" }, "not a DNS label"},
		{"no id", func(s *backend.ContainerSpec) { delete(s.Labels, backend.LabelID) }, "id label"},
		{"no workspace size", func(s *backend.ContainerSpec) { s.WorkspaceMB = 0 }, "workspace"},
		{"no memory limit", func(s *backend.ContainerSpec) { s.MemoryBytes = 0 }, "limits are required"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec := testSpec()
			spec.Labels = map[string]string{backend.LabelManaged: "true", backend.LabelID: "abc123"}
			tc.change(&spec)
			_, err := Pod(spec, Options{Namespace: "ns"})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want it to say %q", err, tc.want)
			}
		})
	}
}

// A sandbox's NetworkPolicy: deny-all for none and allowlist (whose
// connections ride the agent's stream), ingress denied and egress to
// everywhere for egress; always selected by the sandbox id alone.
func TestPolicyFor(t *testing.T) {
	for _, n := range []string{"", "none", "allowlist", "egress"} {
		t.Run("network "+n, func(t *testing.T) {
			spec := testSpec()
			spec.Network = n
			spec.Labels = map[string]string{backend.LabelManaged: "true", backend.LabelID: "abc123"}
			pod, err := Pod(spec, Options{Namespace: "ns"})
			if err != nil {
				t.Fatal(err)
			}
			np := policyFor(pod, networkOf(n))
			sel := np.Spec.PodSelector.MatchLabels
			if len(sel) != 1 || sel[backend.LabelID] != "abc123" || len(np.Spec.PodSelector.MatchExpressions) != 0 {
				t.Errorf("selector %+v", np.Spec.PodSelector)
			}
			if len(np.Spec.PolicyTypes) != 2 || len(np.Spec.Ingress) != 0 {
				t.Errorf("ingress not denied: %+v", np.Spec)
			}
			wantEgress := 0
			if n == "egress" {
				wantEgress = 1
			}
			if len(np.Spec.Egress) != wantEgress || wantEgress == 1 && (len(np.Spec.Egress[0].To) != 0 || len(np.Spec.Egress[0].Ports) != 0) {
				t.Errorf("egress rules %+v, want %d rule(s) open to every destination", np.Spec.Egress, wantEgress)
			}
		})
	}
}

// The pod Pod builds (with its NetworkPolicy) reads back as the hardening
// backend.HardeningFor describes, field by field, but for what a pod
// cannot carry (notOnAPod).
func TestPodHardeningReadBack(t *testing.T) {
	for _, network := range []string{"none", "egress"} {
		t.Run(network, func(t *testing.T) {
			spec := testSpec()
			spec.Network = network
			pod, err := Pod(spec, Options{Namespace: "ns", RuntimeClass: "gvisor"})
			if err != nil {
				t.Fatal(err)
			}
			backendtest.CompareHardening(t, hardeningOf(spec), readPod(pod, policyFor(pod, network)), notOnAPod)
		})
	}
	// A helper pod carries the same.
	sandbox, _ := Pod(testSpec(), Options{Namespace: "ns"})
	for _, network := range []string{"none", "egress"} {
		t.Run("helper "+network, func(t *testing.T) {
			hs := backend.HelperSpec{Image: "img", Cmd: []string{"true"}, User: "65533:65533", Network: network,
				Labels:      map[string]string{backend.LabelID: "abc123-install"},
				MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 16}
			pod, np, err := HelperPod(sandbox, hs, "mcp-sandbox-helper-1", time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			want := hardeningOf(backend.ContainerSpec{User: hs.User, Network: network, MemoryBytes: hs.MemoryBytes,
				NanoCPUs: hs.NanoCPUs, Pids: hs.Pids, WorkspaceMB: hs.WorkspaceMB, TmpMB: helperTmpMB})
			backendtest.CompareHardening(t, want, readPod(pod, np), notOnAPod)
		})
	}
}

// The CPU request is kubernetes.cpu_request, capped at the CPU limit, or
// a tenth of the limit without it; a helper pod requests its sandbox's.
func TestPodCPURequest(t *testing.T) {
	for _, c := range []struct{ setting, want string }{
		{"", "50m"}, // a tenth of testSpec's 0.5 CPU
		{"30m", "30m"}, {"0.25", "250m"},
		{"2", "500m"}, // capped at the limit
	} {
		cpu, err := ParseCPURequest(c.setting)
		if err != nil {
			t.Fatal(err)
		}
		pod, err := Pod(testSpec(), Options{Namespace: "ns", CPURequest: cpu})
		if err != nil {
			t.Fatal(err)
		}
		if got := box(pod).Resources.Requests.Cpu(); got.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("cpu_request %q: the pod requests %s, want %s", c.setting, got, c.want)
		}
		helper, _, err := HelperPod(pod, backend.HelperSpec{Image: "img", Cmd: []string{"true"}, User: "65533:65533", Network: "none",
			Labels:      map[string]string{backend.LabelID: "abc123-install"},
			MemoryBytes: 128 << 20, NanoCPUs: 5e8, Pids: 64, WorkspaceMB: 16}, "mcp-sandbox-helper-1", time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if got := box(helper).Resources.Requests.Cpu(); got.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("cpu_request %q: the helper pod requests %s, want its sandbox's %s", c.setting, got, c.want)
		}
	}
	for _, bad := range []string{"0", "0m", "abc", "-1"} {
		if _, err := ParseCPURequest(bad); err == nil || !strings.Contains(err.Error(), `write millicores ("50m")`) {
			t.Errorf("ParseCPURequest(%q) = %v, want an error saying what to write", bad, err)
		}
	}
}
