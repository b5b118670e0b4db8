package kubernetes

import (
	"context"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/watch"
)

// The staging loop is driven by change: one LIST of the namespace's
// Sandboxes, then a watch from it, which the API server ends after
// stageResync (a LIST and a watch again: the slow resync), or on an
// error (a second or more later, doubling up to stageResync while it
// fails). An idle pool costs no request between two resyncs.

// stageResync is how long one watch of the staging loop lasts.
const stageResync = 10 * time.Minute

// stageRetry is the first wait after a failed LIST or watch.
const stageRetry = time.Second

// stageLoop stages the pools' ready pods until ctx ends (Close).
func (b *Backend) stageLoop(ctx context.Context) {
	wait := stageRetry
	for {
		start := time.Now()
		err := b.stageWatch(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			b.log.Debug("watch the warm pools' sandboxes", "err", err)
			wait = min(2*wait, stageResync)
		case time.Since(start) > stageRetry:
			wait = 0
		default:
			wait = stageRetry // a watch that ends at once: never a LIST loop
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
	}
}

// stageWatch lists the namespace's Sandboxes, stages the ready pool pods
// among them, then watches them from that list and stages each that
// becomes ready, until the watch ends (nil) or fails.
func (b *Backend) stageWatch(ctx context.Context) error {
	w, _ := b.ensuredPools()
	if w == nil {
		return errNoWarmPool
	}
	rc := w.dyn.Resource(w.sandboxes).Namespace(w.ns)
	list, err := rc.List(ctx, metav1.ListOptions{})
	if err != nil {
		return err
	}
	seen := map[string]*unstructured.Unstructured{}
	present := map[string]bool{}
	for i := range list.Items {
		u := &list.Items[i]
		seen[u.GetName()] = u
		present[w.claimedFrom(u, u).Pod] = true
	}
	b.stg.forgetAbsent(present)
	for _, u := range seen {
		b.stageIfReady(ctx, w, u)
	}
	secs := int64(stageResync / time.Second)
	wi, err := rc.Watch(ctx, metav1.ListOptions{ResourceVersion: list.GetResourceVersion(), TimeoutSeconds: &secs, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.stg.rescan:
			for _, u := range seen {
				b.stageIfReady(ctx, w, u)
			}
		case ev, open := <-wi.ResultChan():
			if !open || ev.Type == watch.Error {
				return nil // expired or cut: list again
			}
			u, ok := ev.Object.(*unstructured.Unstructured)
			if !ok || ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(seen, u.GetName())
				b.stg.forget(w.claimedFrom(u, u).Pod)
				continue
			}
			seen[u.GetName()] = u
			b.stageIfReady(ctx, w, u)
		}
	}
}

// stageIfReady stages the pod of u if u is a ready, unreserved sandbox of
// a pool this backend ensured, not staged (or being staged) yet.
func (b *Backend) stageIfReady(ctx context.Context, w *WarmPools, u *unstructured.Unstructured) {
	_, pools := b.ensuredPools()
	for _, pool := range pools {
		if !readyInPool(u, pool) || reserved(u, time.Now()) {
			continue
		}
		pod := w.claimedFrom(u, u).Pod
		if f := b.stg.begin(pod); f != nil {
			b.stageOne(ctx, pod, f)
		}
		return
	}
}
