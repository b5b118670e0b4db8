package sandbox

import (
	"context"
	"errors"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
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
		e.sampleUsage(ctx) // usage for sandbox_list (list.go)
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
// gone owners (inventory.Reap). Another installation's objects, and
// objects without the installation label, are never touched. It returns
// the ids it removed.
func (e *Engine) Reap(ctx context.Context, _ ReapRequest) (ReapResult, error) {
	res, err := inventory.Reap(ctx, e.be, e.st, inventory.ReapRequest{Self: e.owner})
	return ReapResult{Removed: res.Removed}, err
}

// ReapRequest says how Engine.Reap reaps; it has no fields yet, and is
// there so that adding one changes no caller.
type ReapRequest struct{}

// ReapResult is what Engine.Reap reports.
type ReapResult struct {
	// Removed lists the ids of the sandboxes removed.
	Removed []string
}

// platformExpiryMargin is how close the platform's expiry of a sandbox may
// come to the engine's own before the engine moves it, and the room it
// moves it by on top: at least a minute, and a quarter of the idle TTL, so
// a sandbox in use costs the platform one update per quarter TTL.
func platformExpiryMargin(ttl time.Duration) time.Duration {
	return max(ttl/4, time.Minute)
}

// movePlatformExpiry keeps, for a backend whose platform ends sandboxes by
// itself (Expirer), each sandbox's platform expiry ahead of the engine's:
// its last use plus its idle TTL, or now plus the TTL while it is busy.
// The first housekeeping after a create or a claim sets it (the label's is
// the creation-time one); a failure is tried again at the next.
func (e *Engine) movePlatformExpiry(ctx context.Context, now time.Time) {
	ex, ok := e.be.(backend.Expirer)
	if !ok {
		return
	}
	for _, sb := range e.Sandboxes() {
		sb.mu.Lock()
		want := sb.lastUsed.Add(sb.ttl)
		if sb.busy > 0 {
			want = now.Add(sb.ttl)
		}
		margin := platformExpiryMargin(sb.ttl)
		due := !sb.expiryFixed && !sb.removing && (sb.platformExpiry.IsZero() || sb.platformExpiry.Sub(want) < margin)
		sb.mu.Unlock()
		if !due {
			continue
		}
		at := want.Add(2 * margin)
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		err := ex.Expire(cctx, sb.ContainerID, at)
		cancel()
		sb.mu.Lock()
		switch {
		case err == nil:
			sb.platformExpiry = at
		case errors.Is(err, backend.ErrFixedExpiry):
			sb.expiryFixed = true
		}
		sb.mu.Unlock()
		switch {
		case errors.Is(err, backend.ErrFixedExpiry):
			e.log.Warn("the platform ends this sandbox at its creation-time expiry, used or not", "id", sb.ID, "err", err)
		case err != nil:
			e.log.Warn("move the platform's expiry of a sandbox", "id", sb.ID, "err", err)
		}
	}
}

// Stop stops a sandbox this engine owns and answers at once: its processes
// are killed (by its agent, where it has one), it is forgotten, and its
// container and volumes are removed in the background (Close waits for
// that). Should the server die first, the reaper of the next server of
// this installation removes them: its lock proves the owner gone (Reap).
//
// A sandbox another caller is already stopping counts as stopped.
func (e *Engine) Stop(ctx context.Context, id string, _ StopRequest) (StopResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return StopResult{}, err
	}
	e.stop(ctx, sb)
	return StopResult{Stopped: []string{sb.ID}}, nil
}

// StopRequest says how Stop and StopAll stop; it has no fields yet, and
// is there so that adding one changes no caller.
type StopRequest struct{}

// StopResult is what Stop and StopAll report.
type StopResult struct {
	// Stopped lists the ids of the sandboxes stopped.
	Stopped []string
}

// StopAll stops every sandbox the calling client made, as Stop does, and returns
// the ids of those no other caller was stopping already.
func (e *Engine) StopAll(ctx context.Context, _ StopRequest) (StopResult, error) {
	return e.stopEach(ctx, e.sandboxesOf(ctx)), nil
}

// stopEach stops boxes as Stop does.
func (e *Engine) stopEach(ctx context.Context, boxes []*Sandbox) StopResult {
	var ids []string
	for _, sb := range boxes {
		if e.stop(ctx, sb) {
			ids = append(ids, sb.ID)
		}
	}
	return StopResult{Stopped: ids}
}

// stop is Stop for one sandbox; it reports false when another caller is
// already removing it.
func (e *Engine) stop(ctx context.Context, sb *Sandbox) bool {
	runners, ok := sb.beginRemoval()
	if !ok {
		return false
	}
	if s, ok := runners[agentRunner].(agentSlot); ok {
		s.KillAll()
	}
	for _, r := range runners {
		r.close()
	}
	e.stopping.Store(sb.ContainerID, true)
	e.forget(sb.ID)
	e.log.Info("sandbox stopped; removing its container", "id", sb.ID)
	e.bg.Add(1)
	go func() {
		// Owned by e: Close waits for it.
		defer e.bg.Done()
		defer e.stopping.Delete(sb.ContainerID)
		defer sb.removed()
		for try := 0; ; try++ {
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
			err := e.be.Remove(rctx, sb.ContainerID)
			cancel()
			if err == nil {
				e.log.Info("sandbox removed", "id", sb.ID)
				return
			}
			if try == 2 {
				e.log.Warn("remove stopped sandbox; the reaper will", "id", sb.ID, "err", err)
				return
			}
			time.Sleep(time.Second)
		}
	}()
	return true
}

// maxAnnouncedClients bounds the client names a server lists of itself
// (an HTTP server serves any number of sessions).
const maxAnnouncedClients = 16

// Announce says in the state directory, beside this server's lock, that
// the server runs, with its transport ("stdio", "http") and version: the
// window lists the servers running now from these files
// (state.RunningServers). The file goes with the lock when the server
// stops or is proved gone. Without a lock (no state directory, or the lock
// could not be taken) nothing is written.
func (e *Engine) Announce(transport, version string) error {
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if e.lock == nil || e.infoDone {
		return nil
	}
	e.info = state.ServerInfo{Owner: e.owner, PID: os.Getpid(), StartedAt: time.Now().UTC().Truncate(time.Second),
		Transport: transport, Version: version, Clients: e.info.Clients}
	e.announced = true
	return e.st.WriteServerInfo(e.info)
}

// AnnounceClient adds a client, by the name it gave itself (cleaned), to
// what the server says of itself, once Announce has said it runs.
func (e *Engine) AnnounceClient(name string) {
	name = printable.Clean(name, printable.NameMax)
	if name == "" {
		return
	}
	e.infoMu.Lock()
	defer e.infoMu.Unlock()
	if slices.Contains(e.info.Clients, name) || len(e.info.Clients) >= maxAnnouncedClients {
		return
	}
	e.info.Clients = append(e.info.Clients, name)
	if e.announced && e.lock != nil {
		if err := e.st.WriteServerInfo(e.info); err != nil {
			e.log.Warn("write this server's info file", "err", err)
		}
	}
}
