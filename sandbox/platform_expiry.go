package sandbox

import (
	"context"
	"errors"
	"time"
)

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
	ex, ok := e.be.(Expirer)
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
		case errors.Is(err, ErrFixedExpiry):
			sb.expiryFixed = true
		}
		sb.mu.Unlock()
		switch {
		case errors.Is(err, ErrFixedExpiry):
			e.log.Warn("the platform ends this sandbox at its creation-time expiry, used or not", "id", sb.ID, "err", err)
		case err != nil:
			e.log.Warn("move the platform's expiry of a sandbox", "id", sb.ID, "err", err)
		}
	}
}
