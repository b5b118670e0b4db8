package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Run does the engine's background work until ctx is done: it expires idle
// sandboxes, forgets ones stopped or removed from outside (the tray,
// `docker rm`), and stops everything while the service is paused.
func (e *Engine) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.pool.Run(ctx) // the warm pool (sandbox/pool)
	}()
	wg.Add(1)
	go func() {
		defer wg.Done()
		e.sampleUsage(ctx) // usage for sandbox_list (usage.go)
	}()
	defer wg.Wait()
	t := time.NewTicker(e.tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			e.housekeep(ctx)
		}
	}
}

func (e *Engine) housekeep(ctx context.Context) {
	if e.st != nil && e.st.Paused() {
		if res := e.stopEach(ctx, e.Sandboxes()); len(res.Stopped) > 0 { // every client's
			e.log.Info("service paused from the tray; stopped sandboxes", "ids", res.Stopped)
		}
		return
	}
	now := time.Now()
	for _, sb := range e.Sandboxes() {
		sb.mu.Lock()
		idle := sb.busy == 0 && now.After(sb.lastUsed.Add(sb.ttl))
		sb.mu.Unlock()
		if idle {
			e.log.Info("sandbox expired", "id", sb.ID)
			if err := e.remove(ctx, sb); err != nil {
				e.log.Warn("remove expired sandbox", "id", sb.ID, "err", err)
			}
		}
	}
	e.movePlatformExpiry(ctx, now)
	e.reconcile(ctx)
}

// reconcile forgets sandboxes whose container stopped or is gone.
func (e *Engine) reconcile(ctx context.Context) {
	boxes := e.Sandboxes()
	if len(boxes) == 0 {
		return
	}
	list, err := e.be.List(ctx)
	if err != nil {
		return
	}
	alive := map[string]bool{}
	for _, c := range list {
		if c.State == "running" {
			alive[c.ID] = true
		}
	}
	for _, sb := range boxes {
		if alive[sb.ContainerID] {
			continue
		}
		// Its watcher (death.go) normally reports this first; when it
		// could not (the engine was away), the container's state, read
		// now, says how it ended.
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		exit, err := e.be.WaitExit(wctx, sb.ContainerID)
		cancel()
		if err != nil {
			e.log.Debug("read how a sandbox's container ended", "id", sb.ID, "err", err)
			continue
		}
		e.containerStopped(ctx, sb, exit)
	}
}

// Reap removes the managed containers of this installation whose owner
// is proved gone, and those whose owner, alive, let them pass their expiry
// (counted from last use), with their records and the unused volumes of
// gone owners (owners.go, volumes.go). Another installation's objects, and
// objects without the installation label, are never touched. It returns
// the ids it removed.
func (e *Engine) Reap(ctx context.Context, _ ReapRequest) (ReapResult, error) {
	ids, err := Reap(ctx, e.be, e.st, e.owner)
	return ReapResult{Removed: ids}, err
}

// ReapRequest says how Engine.Reap reaps; it has no fields yet, and is
// there so that adding one changes no caller.
type ReapRequest struct{}

// ReapResult is what Engine.Reap reports.
type ReapResult struct {
	// Removed lists the ids of the sandboxes removed.
	Removed []string
}

// Reap is Engine.Reap for callers without an engine; self is an owner id
// whose objects are never reaped (the caller's own, or ""). With no state
// directory nothing can be proved, and nothing is removed.
func Reap(ctx context.Context, be Backend, st *state.Store, self string) ([]string, error) {
	if st == nil {
		return nil, nil
	}
	inst, err := Installation(st)
	if err != nil {
		return nil, err
	}
	list, err := be.List(ctx)
	if err != nil {
		return nil, err
	}
	proof := newOwnerProof(st, inst, self)
	now := time.Now()
	var removed []string
	var errs []error
	present := map[string]bool{}
	for _, c := range list {
		id := c.Labels[LabelID]
		present[id] = true
		why := orphanReason(c, proof, now)
		if why == "" {
			continue
		}
		if err := be.Remove(ctx, c.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove orphan %s (%s): %w", c.Name, why, err))
			continue
		}
		removed = append(removed, id)
		_ = st.RemoveRecord(id)
	}
	if recs, err := st.Records(); err == nil {
		for _, r := range recs {
			if !present[r.ID] {
				_ = st.RemoveRecord(r.ID)
			}
		}
	}
	sweep := volumeSweep{proof: proof}
	if _, err := be.RemoveOrphanVolumes(ctx, func(v VolumeInfo) bool { return sweep.orphanReason(v) != "" }); err != nil {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// expiryGrace is how long past its expiry a sandbox of a live server is
// kept, so a server's own expiry (which is exact) wins over the reaper.
const expiryGrace = 2 * time.Minute

// orphanReason says why a container should be reaped, or "". Only this
// installation's containers are candidates: one whose owner is proved gone
// goes; one whose owner is alive goes only when the owner's record (which
// it updates at every use) says it has been idle past its expiry and the
// grace, and is not busy. The creation-time expires-at label never counts.
func orphanReason(c ContainerInfo, p *ownerProof, now time.Time) string {
	if !Mine(c.Labels, p.installation) || c.Labels[LabelOwner] == p.self {
		return ""
	}
	if p.gone(c.Labels) {
		return "owner gone"
	}
	r, err := p.st.ReadRecord(c.Labels[LabelID])
	if err != nil || r.ContainerID != c.ID || r.Owner != c.Labels[LabelOwner] || r.Busy || r.ExpiresAt.IsZero() {
		return ""
	}
	if now.After(r.ExpiresAt.Add(expiryGrace)) {
		return "idle past its expiry (last used " + r.LastUsed.UTC().Format(time.RFC3339) + ")"
	}
	return ""
}

// StopOptions says which sandboxes StopManaged may touch.
type StopOptions struct {
	// AllUsers lets it stop another installation's sandbox (or one
	// without the installation label): the person asked for it and
	// confirmed.
	AllUsers bool
}

// ErrNotMine is returned for an action on another installation's sandbox
// without StopOptions.AllUsers.
var ErrNotMine = errors.New("another installation's sandbox")

// StopManaged removes a managed sandbox by id, whichever server of this
// installation (st's) made it; another installation's only with AllUsers
// (for `mcp-sandbox stop` and the tray).
func StopManaged(ctx context.Context, be Backend, st *state.Store, id string, o StopOptions) error {
	inst, err := Installation(st)
	if err != nil {
		return err
	}
	list, err := be.List(ctx)
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.Labels[LabelID] != id || c.Labels[LabelHelper] != "" {
			continue
		}
		if !Mine(c.Labels, inst) && !o.AllUsers {
			return fmt.Errorf("%w: sandbox %s was made by another MCP Sandbox installation (another user's, or a server with another state directory); `mcp-sandbox stop --all-users %s` stops it", ErrNotMine, id, id)
		}
		if err := be.Remove(ctx, c.ID); err != nil {
			return err
		}
		if st != nil {
			_ = st.RemoveRecord(id)
		}
		return nil
	}
	return fmt.Errorf("%w: no managed sandbox %q; `mcp-sandbox ps` lists them", ErrNotFound, printable.Clean(id, printable.NameMax))
}

// UnclaimedPool reports whether c is a warm-pool container nobody has
// claimed yet (the tray counts those as "warm", not as sandboxes).
func UnclaimedPool(c ContainerInfo) bool { return unclaimedPool(c) }

// unclaimedPool reports whether c is a warm-pool container nobody has
// claimed yet: claiming renames it from PoolNamePrefix to NamePrefix.
func unclaimedPool(c ContainerInfo) bool {
	return c.Labels[LabelPool] == "true" && strings.HasPrefix(c.Name, PoolNamePrefix)
}
