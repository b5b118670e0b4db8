package kubernetes

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// On the real cluster, a warm pool no server holds any more is listed
// with what it requests, and DeletePools removes it, its template, its
// pods and its NetworkPolicy.
func TestPoolsListedAndDeletedOnCluster(t *testing.T) {
	cs, _ := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	b, err := New(ctx, Config{Kubeconfig: os.Getenv(clusterEnv), Namespace: ns, RuntimeClass: "gvisor", UseAgentSandbox: "auto"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	w, err := b.WarmPools()
	if err != nil {
		t.Fatal(err)
	}
	spec, tmpl := poolTemplate(t, ns)
	pool := PoolName("busybox")
	if err := w.Ensure(ctx, pool, tmpl, 2); err != nil {
		t.Fatal(err)
	}
	waitPoolReady(ctx, t, w, pool, 2)
	h, err := backend.HardeningFor(spec)
	if err != nil {
		t.Fatal(err)
	}
	pools, err := b.ListPools(ctx)
	one := podRequests(podLimits(h))
	cpu, mem := one.Cpu().MilliValue(), one.Memory().Value()
	want := []PoolInfo{{Name: pool, Language: "busybox", Replicas: 2, Ready: 2, CPUMillis: 2 * cpu, MemoryBytes: 2 * mem}}
	if err != nil || !slices.Equal(pools, want) {
		t.Fatalf("ListPools = %+v, %v; want %+v", pools, err, want)
	}
	gone, err := b.DeletePools(ctx)
	if err != nil || !slices.Equal(gone, []string{pool}) {
		t.Fatalf("DeletePools = %v, %v", gone, err)
	}
	if pools, err := b.ListPools(ctx); err != nil || len(pools) > 0 {
		t.Errorf("after DeletePools: %+v, %v", pools, err)
	}
	if _, err := cs.NetworkingV1().NetworkPolicies(ns).Get(ctx, DenyAllName(pool), metav1.GetOptions{}); err == nil {
		t.Errorf("the pool's NetworkPolicy is left")
	}
}
