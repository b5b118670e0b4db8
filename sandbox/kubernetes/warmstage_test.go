package kubernetes

import (
	"context"
	"testing"
	"time"
)

// A claim's StagedAgent waits for its pod's copy under way, gets the file
// once (a later start copies the agent in again), and a pod never staged
// or whose Sandbox went has none.
func TestStagedAgent(t *testing.T) {
	b := &Backend{}
	f := b.stg.begin("pod-a")
	if f == nil || b.stg.begin("pod-a") != nil {
		t.Fatal("a pod is staged once")
	}
	go func() {
		time.Sleep(10 * time.Millisecond)
		f.file = "/workspace/.mcp-sandbox-agent-x"
		close(f.done)
	}()
	ctx := context.Background()
	if got := b.StagedAgent(ctx, "pod-a"); got != "/workspace/.mcp-sandbox-agent-x" {
		t.Errorf("staged: %q", got)
	}
	if got := b.StagedAgent(ctx, "pod-a"); got != "" {
		t.Errorf("taken twice: %q", got)
	}
	if got := b.StagedAgent(ctx, "pod-b"); got != "" {
		t.Errorf("never staged: %q", got)
	}
	close(b.stg.begin("pod-c").done)
	b.stg.forgetAbsent(map[string]bool{})
	if got := b.StagedAgent(ctx, "pod-c"); got != "" {
		t.Errorf("its Sandbox gone: %q", got)
	}
	// A copy that does not end in time leaves the claim to copy itself.
	b.stg.begin("pod-d")
	cctx, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	defer cancel()
	if got := b.StagedAgent(cctx, "pod-d"); got != "" {
		t.Errorf("copy under way past ctx: %q", got)
	}
	// Without the engine's copy nothing is staged.
	b.kickStaging()
	if b.stg.running {
		t.Error("staging without a stage func")
	}
}
