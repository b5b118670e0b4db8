package kubernetes

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

// A pool grows by one for each claim that finds none ready, up to its
// bound, never for a claim that found one, and goes back to its size once
// idle has passed since the last claim.
func TestGrowth(t *testing.T) {
	now := time.Now()
	g := &growth{base: 2, most: 4, idle: time.Minute}
	step := func(hit bool, at time.Time, want int, wantChanged bool) {
		t.Helper()
		if n, changed := g.claimed(hit, at); n != want || changed != wantChanged {
			t.Fatalf("claim (hit %v) = %d, %v; want %d, %v", hit, n, changed, want, wantChanged)
		}
	}
	step(true, now, 2, false)
	step(false, now, 3, true)
	step(false, now, 4, true)
	step(false, now, 4, false) // at its bound
	step(true, now.Add(30*time.Second), 4, false)
	if n, changed := g.idleAt(now.Add(time.Minute)); n != 4 || changed {
		t.Errorf("idle 30 s after the last claim: %d, %v; want 4, false", n, changed)
	}
	if n, changed := g.idleAt(now.Add(91 * time.Second)); n != 2 || changed != true {
		t.Errorf("idle 61 s after the last claim: %d, %v; want 2, true", n, changed)
	}
	if n, changed := (&growth{base: 2, most: 2}).claimed(false, now); n != 2 || changed {
		t.Errorf("a pool whose bound is its size grew: %d, %v", n, changed)
	}
}

// On the cluster, claims that find the pool empty grow its replicas up to
// the bound (and make no claim: the caller makes a Sandbox of its own),
// and the pool goes back to its size once idle.
func TestWarmPoolGrowsOnCluster(t *testing.T) {
	cs, cfg := testCluster(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	ns := testNamespace(ctx, t, cs)
	w := testWarmPools(t, cs, cfg, ns)
	_, tmpl := poolTemplate(t, ns)
	pool := PoolName("busybox")
	w.SetGrowth(pool, 1, 3, 15*time.Second, nil)
	if err := w.Ensure(ctx, pool, tmpl, 1); err != nil {
		t.Fatal(err)
	}
	waitPoolReady(ctx, t, w, pool, 1)
	// Three at once: one takes the ready sandbox, two find none.
	errs := make(chan error, 3)
	for i := range 3 {
		go func() {
			cctx, ccancel := context.WithTimeout(ctx, time.Minute)
			defer ccancel()
			_, err := w.Claim(cctx, pool, fmt.Sprintf("claim-%d", i), nil, nil, time.Now().Add(5*time.Minute))
			errs <- err
		}()
	}
	none := 0
	for range 3 {
		err := <-errs
		switch {
		case errors.Is(err, errNoWarmPool):
			none++
		case err != nil:
			t.Fatal(err)
		}
	}
	if none != 2 {
		t.Fatalf("%d of 3 claims at once on a pool of 1 found none ready, want 2", none)
	}
	replicas := func() int64 {
		u, err := w.dyn.Resource(w.ext.WarmPools).Namespace(ns).Get(ctx, pool, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n, _, _ := unstructured.NestedInt64(u.Object, "spec", "replicas")
		return n
	}
	if n := replicas(); n != 3 {
		t.Fatalf("after 2 claims that found the pool empty: replicas %d, want 3", n)
	}
	deadline := time.Now().Add(time.Minute)
	for replicas() != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("a minute after the last claim (idle 15 s): replicas %d, want 1", replicas())
		}
		time.Sleep(250 * time.Millisecond)
	}
}
