package kubernetes

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynamicfake "k8s.io/client-go/dynamic/fake"
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

// A claim picks a ready pool sandbox whose pod has the agent staged over
// one whose pod has not.
func TestPickReadyPrefersStaged(t *testing.T) {
	gvr := schema.GroupVersionResource{Group: AgentSandboxGroup, Version: "v1beta1", Resource: "sandboxes"}
	yes := true
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{gvr: "SandboxList"})
	for _, name := range []string{"p-a", "p-b", "p-c", "p-d"} {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": AgentSandboxGroup + "/v1beta1", "kind": "Sandbox",
			"metadata": map[string]any{"name": name, "namespace": "ns"},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": "True"}}},
		}}
		u.SetOwnerReferences([]metav1.OwnerReference{{Kind: "SandboxWarmPool", Name: "pool", Controller: &yes}})
		if _, err := dyn.Resource(gvr).Namespace("ns").Create(context.Background(), u, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for range 10 {
		w := NewWarmPools(dyn, gvr, Extensions{}, "ns")
		w.staged = func(pod string) bool { return pod == "p-c" }
		got := w.pickReady(context.Background(), "pool", "claim")
		if got != "p-c" {
			t.Fatalf("picked %q, want the staged p-c", got)
		}
		w.unreserve(context.Background(), "pool", got)
	}
}
