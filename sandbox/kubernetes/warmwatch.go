package kubernetes

import (
	"context"
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// The staging loop is driven by change: one LIST of the namespace's pool
// pods (those with LabelWarmPool), then a watch from it, which the API
// server ends after stageResync (a LIST and a watch again: the slow
// resync), or on an error (a second or more later, doubling up to
// stageResync while it fails). An idle pool costs no request between two
// resyncs. Pods, not their Sandboxes: a pod's staged-by mark, set or
// removed by another server, is a change of the pod.

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
			b.log.Debug("watch the warm pools' pods", "err", err)
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

// stageWatch lists the namespace's pool pods, stages the ready ones, then
// watches them from that list and stages each that becomes ready, until
// the watch ends (nil) or fails.
func (b *Backend) stageWatch(ctx context.Context) error {
	pods := b.cs.pods(b.namespace)
	list, err := pods.List(ctx, metav1.ListOptions{LabelSelector: LabelWarmPool})
	if err != nil {
		return err
	}
	seen := map[string]*corev1.Pod{}
	present := map[string]bool{}
	for i := range list.Items {
		p := &list.Items[i]
		seen[p.Name], present[p.Name] = p, true
	}
	b.stg.forgetAbsent(present)
	for _, p := range seen {
		b.stageIfReady(ctx, p)
	}
	secs := int64(stageResync / time.Second)
	wi, err := pods.Watch(ctx, metav1.ListOptions{LabelSelector: LabelWarmPool, ResourceVersion: list.ResourceVersion, TimeoutSeconds: &secs, AllowWatchBookmarks: true})
	if err != nil {
		return err
	}
	defer wi.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-b.stg.rescan:
			for _, p := range seen {
				b.stageIfReady(ctx, p)
			}
		case ev, open := <-wi.ResultChan():
			if !open || ev.Type == watch.Error {
				return nil // expired or cut: list again
			}
			p, ok := ev.Object.(*corev1.Pod)
			if !ok || ev.Type == watch.Bookmark {
				continue
			}
			if ev.Type == watch.Deleted {
				delete(seen, p.Name)
				b.stg.forget(p.Name)
				continue
			}
			seen[p.Name] = p
			b.stageIfReady(ctx, p)
		}
	}
}

// stageIfReady stages p if it is a running, unclaimed pod of a pool this
// backend ensured that no server stages, not staged (or being staged) by
// this one yet.
func (b *Backend) stageIfReady(ctx context.Context, p *corev1.Pod) {
	_, pools := b.ensuredPools()
	if !slices.Contains(pools, p.Labels[LabelWarmPool]) || !running(p) || len(p.Spec.Containers) == 0 {
		return
	}
	if p.Annotations[AnnotationClaim] != "" {
		return
	}
	if held, lapses := stagedElsewhere(p, time.Now()); held {
		if !lapses.IsZero() {
			b.stg.lookAgainAt(lapses)
		}
		return
	}
	if f := b.stg.begin(p.Name); f != nil {
		b.stageOne(ctx, p, f)
	}
}
