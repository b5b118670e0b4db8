package cli

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// ps names each warm pool with what it holds on the nodes, and how to
// remove them; without pools it adds nothing.
func TestWritePools(t *testing.T) {
	var b strings.Builder
	writePools(&b, nil)
	if b.Len() != 0 {
		t.Errorf("no pools: %q", b.String())
	}
	writePools(&b, []kubernetes.PoolInfo{{Name: "mcp-sandbox-python", Language: "python", Replicas: 2, Ready: 1, CPUMillis: 200, MemoryBytes: 1 << 30}})
	for _, want := range []string{"2 sandboxes requesting 200m CPU and 1024 MiB", "mcp-sandbox stop --pool", "mcp-sandbox-python  python  1 of 2 ready"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("ps pools %q lack %q", b.String(), want)
		}
	}
}
