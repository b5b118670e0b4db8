package kubernetes

import (
	"context"
	"math/rand/v2"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
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

// pickHold is how long a sandbox Claim named stays out of this process's
// picks: until agent-sandbox has moved it from the pool to its claim.
const pickHold = 30 * time.Second

// picks are the pool sandboxes this process named in claims lately, so
// that concurrent claims name different ones.
type picks struct {
	mu    sync.Mutex
	named map[string]time.Time
}

// take marks one of names (at random, so that servers sharing the pool
// rarely name the same) as picked and returns it; "" when every one is
// held.
func (p *picks) take(names []string, now time.Time) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.named == nil {
		p.named = map[string]time.Time{}
	}
	for n, at := range p.named {
		if now.Sub(at) > pickHold {
			delete(p.named, n)
		}
	}
	var free []string
	for _, n := range names {
		if _, held := p.named[n]; !held {
			free = append(free, n)
		}
	}
	if len(free) == 0 {
		return ""
	}
	n := free[rand.IntN(len(free))]
	p.named[n] = now
	return n
}

// readyInPool returns the names of the pool's ready, unclaimed sandboxes
// among items: controlled by the SandboxWarmPool pool, not being deleted,
// their Ready condition True.
func readyInPool(items []unstructured.Unstructured, pool string) []string {
	var names []string
	for i := range items {
		u := &items[i]
		if u.GetDeletionTimestamp() != nil || !controlledByPool(u, pool) || !conditionTrue(u, "Ready") {
			continue
		}
		names = append(names, u.GetName())
	}
	return names
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

// pickReady names a ready sandbox of pool for a new claim; "" when none is
// ready (agent-sandbox then adopts one that is starting, or starts one).
// A failed list is no error: the claim goes without a name.
func (w *WarmPools) pickReady(ctx context.Context, pool string) string {
	list, err := w.dyn.Resource(w.sandboxes).Namespace(w.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		return ""
	}
	return w.picks.take(readyInPool(list.Items, pool), time.Now())
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
