package kubernetes

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// On the cluster .ci/k8s-up starts, which serves the metrics API
// (metrics-server, a 10 s resolution): doctor says so, and Usage of a pod
// holding 64 MiB, under runc and under gVisor (whose in-pod read has no
// CPU), reads its memory from the metrics API once metrics-server
// has a sample of it (from inside the pod before), with the pod spec's
// limit and the pids read inside; once removed, it has none.
func TestUsageFromMetricsOnCluster(t *testing.T) {
	b := testBackend(t, Config{UseAgentSandbox: "never"})
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	r := Doctor(ctx, Config{Kubeconfig: b.cfg.Kubeconfig, Namespace: b.namespace, UseAgentSandbox: "never"}, nil)
	i := slices.IndexFunc(r.Checks, func(c Check) bool { return c.Name == "metrics" })
	if !r.Metrics || i < 0 || !strings.Contains(r.Checks[i].Detail, "served: metrics.k8s.io/v1beta1") || len(r.Missing) > 0 {
		t.Fatalf("doctor: metrics %v, checks %+v, missing %v; want the metrics API served (.ci/k8s-up starts metrics-server)", r.Metrics, r.Checks, r.Missing)
	}
	for _, rc := range []string{"", "gvisor"} {
		t.Run("runtime class "+cmp.Or(rc, "default (runc)"), func(t *testing.T) {
			t.Parallel()
			usageFromMetrics(t, testBackend(t, Config{UseAgentSandbox: "never", RuntimeClass: rc, Namespace: b.namespace}))
		})
	}
}

// usageFromMetrics checks Usage of a pod of b holding 64 MiB.
func usageFromMetrics(t *testing.T, b *Backend) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	spec := uniqueSpec(time.Now().Add(time.Hour))
	spec.MemoryBytes, spec.TmpMB = 256<<20, 96
	if _, err := b.EnsureImage(ctx, spec.Image, "never", nil); err != nil {
		t.Fatal(err)
	}
	id, err := b.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Remove(context.Background(), id) })
	// 64 MiB in /tmp, a memory-backed volume: charged to the container.
	var out strings.Builder
	st, err := b.Exec(ctx, id, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "dd if=/dev/zero of=/tmp/fill bs=1M count=64 2>&1"}, Stdout: &out})
	if err != nil || st.ExitCode != 0 {
		t.Fatalf("filling /tmp: %+v, %v, %q", st, err, out.String())
	}
	start := time.Now()
	deadline := start.Add(90 * time.Second)
	var u backend.Usage
	for {
		if u, err = b.Usage(ctx, id); err != nil {
			t.Fatalf("Usage: %v", err)
		}
		if u.Source == backend.UsageMetrics || time.Now().After(deadline) {
			break
		}
		if u.Source != backend.UsageInPod {
			t.Fatalf("Usage before the first sample = %+v; want it read inside the pod", u)
		}
		time.Sleep(2 * time.Second)
	}
	if u.Source != backend.UsageMetrics || u.MemoryBytes < 64<<20 || u.MemoryLimit != uint64(spec.MemoryBytes) || u.Pids == 0 || u.SampledAt.IsZero() {
		t.Errorf("Usage = %+v; want from the metrics API within 90 s, at least 64 MiB of the %d-byte limit, pids", u, spec.MemoryBytes)
	}
	t.Logf("Usage after %v: %+v", time.Since(start).Round(time.Second), u)
	// A removed sandbox has no usage, though its last sample may linger.
	if err := b.Remove(ctx, id); err != nil {
		t.Fatal(err)
	}
	if u, err := b.Usage(ctx, id); err == nil {
		t.Errorf("Usage of a removed sandbox = %+v, want an error", u)
	}
}
