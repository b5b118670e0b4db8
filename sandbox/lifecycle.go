package sandbox

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

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
		e.pool.run(ctx) // the warm pool (pool.go)
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
		if ids, _ := e.StopAll(ctx); len(ids) > 0 {
			e.log.Info("service paused from the tray; stopped sandboxes", "ids", ids)
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

// Reap removes managed containers left behind by servers that are gone: on
// this host, ones whose owner process no longer exists; anywhere, ones
// whose expiry has passed. It also removes the records of sandboxes that
// are gone and the unused volumes no live server may still attach
// (volumeSweep). It returns the ids it removed.
func (e *Engine) Reap(ctx context.Context) ([]string, error) {
	return Reap(ctx, e.be, e.st, e.owner, e.hostname)
}

// Reap is Engine.Reap for callers without an engine (the tray, the CLI);
// skipOwner is an owner id whose sandboxes are never reaped.
func Reap(ctx context.Context, be Backend, st *state.Store, skipOwner, hostname string) ([]string, error) {
	list, err := be.List(ctx)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	var removed []string
	var errs []error
	present := map[string]bool{}
	for _, c := range list {
		id := c.Labels[LabelID]
		present[id] = true
		if c.Labels[LabelOwner] == skipOwner {
			continue
		}
		why := orphanReason(c, st, now, hostname)
		if why == "" {
			continue
		}
		if err := be.Remove(ctx, c.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove orphan %s: %w", c.Name, err))
			continue
		}
		removed = append(removed, id)
		if st != nil {
			_ = st.RemoveRecord(id)
		}
	}
	if st != nil {
		if recs, err := st.Records(); err == nil {
			for _, r := range recs {
				if !present[r.ID] {
					_ = st.RemoveRecord(r.ID)
				}
			}
		}
	}
	sweep := volumeSweep{now: time.Now(), hostname: hostname, skipOwner: skipOwner, alive: processAlive}
	if _, err := be.RemoveOrphanVolumes(ctx, func(v VolumeInfo) bool { return sweep.orphanReason(v) != "" }); err != nil {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// expiryGrace is how long past its expiry a sandbox of a live server is
// kept, so a server's own expiry (which is exact) wins over the reaper.
const expiryGrace = 2 * time.Minute

// orphanReason says why a container should be reaped, or "".
func orphanReason(c ContainerInfo, st *state.Store, now time.Time, hostname string) string {
	pid, _ := strconv.Atoi(c.Labels[LabelOwnerPID])
	if c.Labels[LabelOwnerHost] == hostname && pid > 0 && !processAlive(pid) {
		return "owner process gone"
	}
	exp, err := time.Parse(time.RFC3339, c.Labels[LabelExpiresAt])
	if st != nil {
		if r, rerr := st.ReadRecord(c.Labels[LabelID]); rerr == nil && !r.ExpiresAt.IsZero() {
			exp, err = r.ExpiresAt, nil
		}
	}
	// A pool container's label expiry is far off (poolLabelTTL): its owner
	// replaces it first. Once claimed, its record holds the real expiry.
	if err == nil && now.After(exp.Add(expiryGrace)) {
		return "expired"
	}
	if c.State == "exited" || c.State == "dead" {
		return "not running"
	}
	return ""
}

// StopManaged removes a managed sandbox by id, whichever server made it
// (for `mcp-sandbox stop` and the tray).
func StopManaged(ctx context.Context, be Backend, st *state.Store, id string) error {
	list, err := be.List(ctx)
	if err != nil {
		return err
	}
	for _, c := range list {
		if c.Labels[LabelID] == id {
			if err := be.Remove(ctx, c.ID); err != nil {
				return err
			}
			if st != nil {
				_ = st.RemoveRecord(id)
			}
			return nil
		}
	}
	return fmt.Errorf("%w: no managed sandbox %q; `mcp-sandbox ps` lists them", ErrNotFound, id)
}

// unclaimedPool reports whether c is a warm-pool container nobody has
// claimed yet: claiming renames it from PoolNamePrefix to NamePrefix.
func unclaimedPool(c ContainerInfo) bool {
	return c.Labels[LabelPool] == "true" && strings.HasPrefix(c.Name, PoolNamePrefix)
}
