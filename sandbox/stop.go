package sandbox

import (
	"context"
	"time"
)

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
	if s, ok := runners[agentRunner].(*agentSlot); ok {
		s.killAll()
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
