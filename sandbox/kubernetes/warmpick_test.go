package kubernetes

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// readyInPool takes the pool's own ready, unclaimed sandboxes only, and a
// reservation holds for reserveHold.
func TestPickReady(t *testing.T) {
	yes := true
	sb := func(name, ownerKind, owner, ready string, deleting bool) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"metadata": map[string]any{"name": name},
			"status":   map[string]any{"conditions": []any{map[string]any{"type": "Ready", "status": ready}}},
		}}
		u.SetOwnerReferences([]metav1.OwnerReference{{Kind: ownerKind, Name: owner, Controller: &yes}})
		if deleting {
			now := metav1.Now()
			u.SetDeletionTimestamp(&now)
		}
		return u
	}
	var got []string
	for _, u := range []*unstructured.Unstructured{
		sb("a", "SandboxWarmPool", "mcp-sandbox-python", "True", false),
		sb("b", "SandboxWarmPool", "mcp-sandbox-python", "False", false),
		sb("c", "SandboxWarmPool", "mcp-sandbox-bash", "True", false),
		sb("d", "SandboxClaim", "claim-1", "True", false),
		sb("e", "SandboxWarmPool", "mcp-sandbox-python", "True", true),
		sb("f", "SandboxWarmPool", "mcp-sandbox-python", "True", false),
	} {
		if readyInPool(u, "mcp-sandbox-python") {
			got = append(got, u.GetName())
		}
	}
	if fmt.Sprint(got) != "[a f]" {
		t.Fatalf("readyInPool: %v, want [a f]", got)
	}
	now := time.Now()
	u := sb("a", "SandboxWarmPool", "mcp-sandbox-python", "True", false)
	for _, c := range []struct {
		value string
		want  bool
	}{
		{"", false},
		{"claim-1 " + now.Add(-10*time.Second).UTC().Format(time.RFC3339), true},
		{"claim-1 " + now.Add(-reserveHold-time.Second).UTC().Format(time.RFC3339), false},
		{"claim-1", false},
	} {
		u.SetAnnotations(map[string]string{AnnotationReservedBy: c.value})
		if got := reserved(u, now); got != c.want {
			t.Errorf("reserved with %q = %v, want %v", c.value, got, c.want)
		}
	}
}

// A claim adopts one of its pool's ready sandboxes even after a
// SandboxWarmPool of the same name was deleted in another namespace (which
// makes agent-sandbox v0.5.0 forget every ready sandbox of every pool of
// that name: its claims then start sandboxes cold). Claim times are
// printed, none asserted.
func TestClaimAfterForeignPoolDeletedOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns, other := testNamespace(ctx, t, cs), testNamespace(ctx, t, cs)
	w, foreign := testWarmPools(t, cs, cfg, ns), testWarmPools(t, cs, cfg, other)
	_, tmpl := poolTemplate(t, ns)
	pool := PoolName("busybox")
	if err := w.Ensure(ctx, pool, tmpl, 2); err != nil {
		t.Fatal(err)
	}
	waitPoolReady(ctx, t, w, pool, 2)
	// Another namespace's pool of the same name comes and goes.
	if err := foreign.EnsurePool(ctx, pool, 0); err != nil {
		t.Fatal(err)
	}
	if err := foreign.Delete(ctx, pool); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second) // agent-sandbox sees the deletion (no event tells when)
	for i := range 2 {
		name := fmt.Sprintf("claim-%d", i)
		cctx, ccancel := context.WithTimeout(ctx, time.Minute)
		start := time.Now()
		c, err := w.Claim(cctx, pool, name, nil, nil, time.Now().Add(5*time.Minute))
		ccancel()
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("claim %d bound to %s in %d ms", i, c.Sandbox, time.Since(start).Milliseconds())
		if c.Sandbox == name {
			t.Errorf("claim %d: agent-sandbox started sandbox %s cold while the pool held ready ones", i, c.Sandbox)
		}
	}
}
