package bench

import (
	"os"
	"path/filepath"
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
