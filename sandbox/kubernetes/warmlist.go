package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// PoolInfo is one warm pool of the namespace as ps shows it: how many
// sandboxes it keeps and has ready, and what they reserve on the nodes
// (the requests of one pod times its replicas).
type PoolInfo struct {
	Name     string `json:"name"`
	Language string `json:"language"`
	Replicas int    `json:"replicas"`
	Ready    int    `json:"ready"`
	// CPUMillis and MemoryBytes are what the pool's pods request in all.
	CPUMillis   int64 `json:"cpu_request_millicores"`
	MemoryBytes int64 `json:"memory_request_bytes"`
}

// managedBy is the label WarmPools.object puts on what it makes.
const managedBy = "app.kubernetes.io/managed-by=mcp-sandbox"

// ListPools lists this program's warm pools in the namespace (whichever
// server of it made them: a pool outlives every server); none without
// agent-sandbox's extensions.
func (b *Backend) ListPools(ctx context.Context) ([]PoolInfo, error) {
	w, err := b.warmPools()
	if err != nil {
		return nil, nil
	}
	pools, err := w.dyn.Resource(w.ext.WarmPools).Namespace(w.ns).List(ctx, metav1.ListOptions{LabelSelector: managedBy})
	if err != nil {
		return nil, b.wrap("list warm pools", err)
	}
	var out []PoolInfo
	for _, p := range pools.Items {
		in := PoolInfo{Name: p.GetName(), Language: strings.TrimPrefix(p.GetName(), PoolName(""))}
		n, _, _ := unstructured.NestedInt64(p.Object, "spec", "replicas")
		r, _, _ := unstructured.NestedInt64(p.Object, "status", "readyReplicas")
		in.Replicas, in.Ready = int(n), int(r)
		if t, err := w.dyn.Resource(w.ext.Templates).Namespace(w.ns).Get(ctx, p.GetName(), metav1.GetOptions{}); err == nil {
			cpu, mem := templateRequests(t)
			in.CPUMillis, in.MemoryBytes = cpu*n, mem*n
		}
		out = append(out, in)
	}
	return out, nil
}

// templateRequests is what one pod of a SandboxTemplate requests: CPU in
// millicores and memory in bytes (0 where it does not say).
func templateRequests(t *unstructured.Unstructured) (cpuMillis, memBytes int64) {
	cs, _, _ := unstructured.NestedSlice(t.Object, "spec", "podTemplate", "spec", "containers")
	for _, c := range cs {
		req, _, _ := unstructured.NestedStringMap(c.(map[string]any), "resources", "requests")
		if q, err := resource.ParseQuantity(req["cpu"]); err == nil {
			cpuMillis += q.MilliValue()
		}
		if q, err := resource.ParseQuantity(req["memory"]); err == nil {
			memBytes += q.Value()
		}
	}
	return cpuMillis, memBytes
}

// poolPodsGone bounds how long DeletePools waits for a pool's unclaimed
// pods to go before it removes the pool's NetworkPolicy.
const poolPodsGone = 20 * time.Second

// DeletePools removes this program's warm pools in the namespace and their
// templates (their unclaimed sandboxes with them), and each pool's
// NetworkPolicy once none of its pods is left; a claimed sandbox stays
// until it is stopped, and keeps the policy. It returns the pools
// removed. A server of the namespace still running makes its pool again
// only when it restarts.
func (b *Backend) DeletePools(ctx context.Context) ([]string, error) {
	pools, err := b.ListPools(ctx)
	if err != nil {
		return nil, err
	}
	w, _ := b.warmPools()
	var gone []string
	var errs []error
	for _, p := range pools {
		if err := w.Delete(ctx, p.Name); err != nil {
			errs = append(errs, err)
			continue
		}
		gone = append(gone, p.Name)
	}
	for _, name := range gone {
		if b.waitPoolPods(ctx, name) {
			errs = append(errs, w.DeletePolicy(ctx, name))
		}
	}
	return gone, errors.Join(errs...)
}

// waitPoolPods waits up to poolPodsGone for the pool's pods to go and
// reports whether they did.
func (b *Backend) waitPoolPods(ctx context.Context, pool string) bool {
	ctx, cancel := context.WithTimeout(ctx, poolPodsGone)
	defer cancel()
	for {
		pods, err := b.cs.pods(b.namespace).List(ctx, metav1.ListOptions{LabelSelector: fmt.Sprintf("%s=%s", LabelWarmPool, pool)})
		if err == nil && len(pods.Items) == 0 {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-time.After(500 * time.Millisecond):
		}
	}
}
