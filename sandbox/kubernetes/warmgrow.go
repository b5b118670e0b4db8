package kubernetes

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// A warm pool grows under demand as the Docker pool does (sandbox/pool):
// each claim that finds no ready sandbox in it adds one to the pool's
// replicas, up to Config.WarmPoolMax, and once no claim has come for
// Config.WarmPoolIdle the pool goes back to its kubernetes.warm_pool size.
// agent-sandbox refills what claims take by itself.

// growTimeout bounds one change of a pool's replicas.
const growTimeout = 10 * time.Second

// growth is one pool's size under demand.
type growth struct {
	base, most int
	idle       time.Duration
	extra      int
	busy       time.Time
	timer      *time.Timer
	// denied: the Role may not resize the pool (said once in the log).
	denied bool
}

// claimed records a claim at now, hit when it found a ready sandbox, and
// returns the replicas the pool is to have and whether they changed.
func (g *growth) claimed(hit bool, now time.Time) (int, bool) {
	g.busy = now
	if hit || g.base+g.extra >= g.most {
		return g.base + g.extra, false
	}
	g.extra++
	return g.base + g.extra, true
}

// idleAt returns the replicas the pool is to have at now and whether they
// changed: its base once idle has passed since the last claim.
func (g *growth) idleAt(now time.Time) (int, bool) {
	if g.extra == 0 || now.Sub(g.busy) < g.idle {
		return g.base + g.extra, false
	}
	g.extra = 0
	return g.base, true
}

// demand is the growth of each pool of a WarmPools, by pool name.
type demand struct {
	mu    sync.Mutex
	pools map[string]*growth
	log   *slog.Logger
	// writing orders the changes of replicas, so the last one written
	// is the latest size (two claims' changes could pass each other).
	writing sync.Mutex
}

// SetGrowth lets pool grow from base up to most sandboxes under demand,
// back to base after idle without a claim; most ≤ base: it does not grow.
func (w *WarmPools) SetGrowth(pool string, base, most int, idle time.Duration, log *slog.Logger) {
	w.demand.mu.Lock()
	defer w.demand.mu.Unlock()
	if w.demand.pools == nil {
		w.demand.pools = map[string]*growth{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	w.demand.log = log
	w.demand.pools[pool] = &growth{base: base, most: max(most, base), idle: idle}
}

// demanded grows pool after a claim that found no ready sandbox in it, and
// arms its shrink.
func (w *WarmPools) demanded(pool string, hit bool) {
	d := &w.demand
	d.mu.Lock()
	g := d.pools[pool]
	if g == nil {
		d.mu.Unlock()
		return
	}
	_, changed := g.claimed(hit, time.Now())
	if changed && g.timer == nil {
		g.timer = time.AfterFunc(g.idle, func() { w.shrink(pool) })
	}
	d.mu.Unlock()
	if changed {
		w.resize(pool, "grows under demand")
	}
}

// shrink takes pool back to its base once it is idle, or looks again
// when it will be.
func (w *WarmPools) shrink(pool string) {
	d := &w.demand
	d.mu.Lock()
	g := d.pools[pool]
	_, changed := g.idleAt(time.Now())
	if g.extra > 0 {
		g.timer = time.AfterFunc(max(time.Until(g.busy.Add(g.idle)), time.Second), func() { w.shrink(pool) })
	} else {
		g.timer = nil
	}
	d.mu.Unlock()
	if changed {
		w.resize(pool, "idle: back to its size")
	}
}

// resize sets the pool's replicas to its size now. A failure leaves the
// pool as it is; a Role that may not patch pools (see AdminPermissions)
// does not try again.
func (w *WarmPools) resize(pool string, why string) {
	d := &w.demand
	d.writing.Lock()
	defer d.writing.Unlock()
	d.mu.Lock()
	g := d.pools[pool]
	n, denied := g.base+g.extra, g.denied
	d.mu.Unlock()
	if denied {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), growTimeout)
	defer cancel()
	patch := fmt.Appendf(nil, `{"spec":{"replicas":%d}}`, n)
	_, err := w.dyn.Resource(w.ext.WarmPools).Namespace(w.ns).Patch(ctx, pool, types.MergePatchType, patch, metav1.PatchOptions{})
	if err != nil {
		if apierrors.IsForbidden(err) {
			d.mu.Lock()
			g.denied = true
			d.mu.Unlock()
		}
		d.log.Warn("warm pool: cannot change its size; it keeps the one it has", "pool", pool, "replicas", n, "err", err)
		return
	}
	w.demand.log.Debug("warm pool: "+why, "pool", pool, "replicas", n)
}
