package bench

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// The measured server's config is one the server loads: the Kubernetes
// backend on the cluster given, with the warm pool asked for (none at 0).
func TestKubeConfig(t *testing.T) {
	for _, size := range []int{0, 2} {
		o := KubeOptions{Kubeconfig: "/k/admin.kubeconfig", Namespace: "ns1", RuntimeClass: "gvisor", WarmPool: size, Image: "img:1", Pull: "never"}
		p := filepath.Join(t.TempDir(), "config.toml")
		if err := os.WriteFile(p, []byte(kubeConfig(o)), 0o600); err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Load(p)
		if err != nil {
			t.Fatalf("warm pool %d: %v", size, err)
		}
		k := cfg.Kubernetes
		if cfg.Backend.Kind != config.BackendKubernetes || k.Kubeconfig != o.Kubeconfig || k.Namespace != "ns1" ||
			k.RuntimeClass != "gvisor" || k.WarmPool["python"] != size || cfg.Images.Python != "img:1" || cfg.Pool.Size != 0 {
			t.Errorf("warm pool %d: loaded %+v, %+v", size, cfg.Backend, k)
		}
	}
}

// A start that fails returns its error, not a panic in the deferred
// clean-up (which once ran Close on the nil harness returned).
func TestStartKubeFailsWithoutPanic(t *testing.T) {
	h, err := StartKube(t.Context(), KubeOptions{Server: filepath.Join(t.TempDir(), "no-such-server"), Kubectl: "/bin/true"})
	if err == nil || h != nil {
		t.Fatalf("StartKube = %v, %v; want nil and the server's error", h, err)
	}
	if err := (*KubeHarness)(nil).Close(); err != nil {
		t.Errorf("Close on nil: %v", err)
	}
}

// The baseline pod passes Pod Security's "restricted" level: a non-root
// user, no escalation, no capabilities, seccomp RuntimeDefault.
func TestBaselineOverridesRestricted(t *testing.T) {
	s, err := baselineOverrides("p1", "gvisor")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"runAsNonRoot":true`, `"allowPrivilegeEscalation":false`, `"drop":["ALL"]`, `"type":"RuntimeDefault"`, `"runtimeClassName":"gvisor"`, `"name":"p1"`} {
		if !strings.Contains(s, want) {
			t.Errorf("overrides %s lack %s", s, want)
		}
	}
}
