package kubernetes

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/watch"
)

// AssignedSandbox is the claim annotation that names the pool sandbox
// agent-sandbox is to adopt for it (its "sandbox-name" annotation).
//
// Claim names one itself rather than leave the pick to agent-sandbox's
// in-memory queue: in v0.5.0 that queue is keyed by the pool's name
// alone, across namespaces, and deleting any SandboxWarmPool of that name
// (another team's `stop --pool`, a namespace being deleted) drops it;
// the pool's ready sandboxes are queued again only when they change, so
// every later claim of every namespace's pool of that name starts a
// sandbox cold (about a second) while the pool sits full.
const AssignedSandbox = AgentSandboxGroup + "/sandbox-name"

// AnnotationReservedBy marks a pool sandbox that a claim of this program
// names, set with the sandbox's resourceVersion as a precondition: of two
// servers naming the same sandbox at once, one wins and the other picks
// another (agent-sandbox adopts a sandbox for a claim without such a
// precondition: both claims would be bound to it).
// Its value is the claim's name and the time, a space apart: a
// reservation older than reserveHold (its server died between the two
// steps) no longer holds.
const AnnotationReservedBy = "io.mcp-sandbox.reserved-by"

// reserveHold is how long a reservation keeps a sandbox from other claims:
// agent-sandbox adopts it for the claim within a second or two.
const reserveHold = time.Minute

// reserved reports whether u is reserved for a claim at now.
func reserved(u *unstructured.Unstructured, now time.Time) bool {
	v := u.GetAnnotations()[AnnotationReservedBy]
	_, at, ok := strings.Cut(v, " ")
	t, err := time.Parse(time.RFC3339, at)
	return ok && err == nil && now.Sub(t) < reserveHold
}

// readyInPool reports whether u is a ready, unclaimed sandbox of pool:
// controlled by the SandboxWarmPool pool, not being deleted, its Ready
// condition True.
func readyInPool(u *unstructured.Unstructured, pool string) bool {
	return u.GetDeletionTimestamp() == nil && controlledByPool(u, pool) && conditionTrue(u, "Ready")
}

func controlledByPool(u *unstructured.Unstructured, pool string) bool {
	for _, o := range u.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return o.Kind == "SandboxWarmPool" && o.Name == pool
		}
	}
	return false
}

func conditionTrue(u *unstructured.Unstructured, kind string) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		if m, _ := c.(map[string]any); m["type"] == kind {
			return m["status"] == "True"
		}
	}
	return false
}

// pickReady reserves a ready sandbox of pool for the claim and returns
// its name; "" when none is ready and free. A failed list is no error:
// there is then none to name.
func (w *WarmPools) pickReady(ctx context.Context, pool, claim string) string {
	list, err := w.dyn.Resource(w.sandboxes).Namespace(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	var free []*unstructured.Unstructured
	for i := range list.Items {
		u := &list.Items[i]
		if readyInPool(u, pool) && !reserved(u, time.Now()) {
			free = append(free, u)
		}
	}
	// At random, so that servers sharing the pool rarely try the same.
	rand.Shuffle(len(free), func(i, j int) { free[i], free[j] = free[j], free[i] })
	if w.staged != nil {
		// Those with the agent staged first: their claim only starts it.
		slices.SortStableFunc(free, func(a, b *unstructured.Unstructured) int {
			return w.stagedRank(a) - w.stagedRank(b)
		})
	}
	for _, u := range free {
		by := claim + " " + time.Now().UTC().Format(time.RFC3339)
		patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:%q}}}`, u.GetResourceVersion(), AnnotationReservedBy, by)
		_, err := w.dyn.Resource(w.sandboxes).Namespace(w.ns).Patch(ctx, u.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
		if err == nil {
			return u.GetName()
		}
	}
	return ""
}

// controlledBy reports whether the claim of uid controls sb: false when
// another claim adopted the sandbox this one was bound to (two claims
// naming the same pool sandbox at once).
func controlledBy(sb *unstructured.Unstructured, uid types.UID) bool {
	for _, o := range sb.GetOwnerReferences() {
		if o.Controller != nil && *o.Controller {
			return o.Kind == "SandboxClaim" && o.UID == uid
		}
	}
	return false
}

// unreserve frees the sandbox a failed claim reserved, if it is still the
// pool's (agent-sandbox did not adopt it).
func (w *WarmPools) unreserve(ctx context.Context, pool, sandbox string) {
	rc := w.dyn.Resource(w.sandboxes).Namespace(w.ns)
	u, err := rc.Get(ctx, sandbox, metav1.GetOptions{})
	if err != nil || !controlledByPool(u, pool) {
		return
	}
	patch := fmt.Appendf(nil, `{"metadata":{"resourceVersion":%q,"annotations":{%q:null}}}`, u.GetResourceVersion(), AnnotationReservedBy)
	_, _ = rc.Patch(ctx, sandbox, types.MergePatchType, patch, metav1.PatchOptions{})
}

// waitAdopted waits until the claim is bound to sandbox, the ready pool
// sandbox it names: from the moment agent-sandbox has moved the sandbox to
// the claim (its pod already runs), without waiting for the claim's own
// Ready (another pass of agent-sandbox and a status write later), or until
// the claim is refused or bound (waitBound), whichever comes first.
func (w *WarmPools) waitAdopted(ctx context.Context, claim *unstructured.Unstructured, sandbox string) (Claimed, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type result struct {
		c       Claimed
		err     error
		byClaim bool
	}
	done := make(chan result, 2)
	go func() {
		c, err := w.waitBound(ctx, claim)
		done <- result{c, err, true}
	}()
	go func() {
		c, err := w.watchAdopted(ctx, claim, sandbox)
		done <- result{c, err, false}
	}()
	for {
		r := <-done
		// The sandbox's watch failing leaves the claim's to answer.
		if r.err == nil || r.byClaim {
			return r.c, r.err
		}
	}
}

// watchAdopted watches sandbox until the claim controls it.
func (w *WarmPools) watchAdopted(ctx context.Context, claim *unstructured.Unstructured, sandbox string) (Claimed, error) {
	rc := w.dyn.Resource(w.sandboxes).Namespace(w.ns)
	for {
		u, err := rc.Get(ctx, sandbox, metav1.GetOptions{})
		if err != nil {
			return Claimed{}, err
		}
		if controlledBy(u, claim.GetUID()) {
			return w.claimedFrom(claim, u), nil
		}
		wi, err := rc.Watch(ctx, metav1.ListOptions{FieldSelector: "metadata.name=" + sandbox, ResourceVersion: u.GetResourceVersion()})
		if err != nil {
			return Claimed{}, err
		}
		for ev := range wi.ResultChan() {
			u, ok := ev.Object.(*unstructured.Unstructured)
			if ev.Type == watch.Deleted {
				wi.Stop()
				return Claimed{}, fmt.Errorf("sandbox %s was deleted before it was adopted", sandbox)
			}
			if ok && controlledBy(u, claim.GetUID()) {
				wi.Stop()
				return w.claimedFrom(claim, u), nil
			}
		}
		wi.Stop()
		if err := ctx.Err(); err != nil {
			return Claimed{}, err
		}
	}
}

// stagedRank is 0 for a pool sandbox whose pod has the agent staged, 1
// for any other.
func (w *WarmPools) stagedRank(u *unstructured.Unstructured) int {
	if w.staged(w.claimedFrom(u, u).Pod) {
		return 0
	}
	return 1
}
