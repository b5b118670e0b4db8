package kubernetes

import (
	"context"
	"os"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/backendtest"
)

// testBackend is a Backend on the test cluster in a namespace of the
// test's own (deleted after it), or a skip without one.
func testBackend(t *testing.T, cfg Config) *Backend {
	t.Helper()
	cs, _ := testCluster(t)
	ctx := context.Background()
	if cfg.Namespace == "" {
		cfg.Namespace = testNamespace(ctx, t, cs)
	}
	if cfg.Kubeconfig == "" {
		cfg.Kubeconfig = os.Getenv(clusterEnv)
	}
	b, err := New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close) // after the engines on it (cleaned up before)
	return b
}

// The backend conformance suite on the real cluster: plain pods under the
// cluster's default runtime (runc), and agent-sandbox Sandbox objects
// under the gvisor RuntimeClass.
func TestConformanceOnCluster(t *testing.T) {
	for _, c := range []struct {
		name string
		cfg  Config
	}{
		{"runc-pods", Config{UseAgentSandbox: "never"}},
		{"gvisor-sandboxes", Config{UseAgentSandbox: "always", RuntimeClass: "gvisor"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := testBackend(t, c.cfg)
			backendtest.Run(t, func(t *testing.T) backend.Backend { return b }, backendtest.Options{
				Image: "mcp-sandbox-test/busybox:1",
			})
		})
	}
}
