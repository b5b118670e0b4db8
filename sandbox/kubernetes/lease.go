package kubernetes

import (
	"context"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
)

// DefaultLease is how far ahead of now the backend keeps each agent-sandbox
// sandbox's shutdownTime while it lives (Config.Lease unset): a server
// that dies with its watchdog leaves sandboxes the cluster removes within
// it, not at their idle expiry. It is renewed every third of it, so two
// renewals may fail (the API server away a moment) before a sandbox in use
// would go.
const DefaultLease = 3 * time.Minute

// leases are the sandboxes whose shutdownTime this backend renews: each
// pod's engine expiry (what the shutdownTime would be without a lease).
type leases struct {
	mu      sync.Mutex
	expiry  map[string]time.Time
	started bool
	stop    chan struct{}
}

// lease is the configured lease.
func (b *Backend) lease() time.Duration {
	if b.cfg.Lease > 0 {
		return b.cfg.Lease
	}
	return DefaultLease
}

// leased is the shutdownTime for a sandbox that expires at: the lease's
// end, or the expiry if sooner.
func (b *Backend) leased(expires time.Time) time.Time {
	if end := time.Now().Add(b.lease()); end.Before(expires) {
		return end
	}
	return expires
}

// holdLease records that the sandbox id (its pod's name) expires at and
// has its shutdownTime renewed until then, and starts the renewals.
func (b *Backend) holdLease(id string, expires time.Time) {
	l := &b.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.expiry == nil {
		l.expiry = map[string]time.Time{}
	}
	l.expiry[id] = expires
	if !l.started {
		l.started, l.stop = true, make(chan struct{})
		go b.renewLeases(l.stop, b.lease()/3)
	}
}

// dropLease stops renewing the sandbox id.
func (b *Backend) dropLease(id string) {
	b.leases.mu.Lock()
	delete(b.leases.expiry, id)
	b.leases.mu.Unlock()
}

// StopLeases stops renewing every lease, as a server that dies does: the
// cluster then removes the sandboxes when their leases end.
func (b *Backend) StopLeases() {
	l := &b.leases
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.started {
		close(l.stop)
		l.started = false
	}
	l.expiry = nil
}

// renewLeases moves each leased sandbox's shutdownTime a lease ahead
// every interval until stop; a sandbox that is gone is dropped.
func (b *Backend) renewLeases(stop <-chan struct{}, interval time.Duration) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case <-t.C:
		}
		b.leases.mu.Lock()
		due := make(map[string]time.Time, len(b.leases.expiry))
		for id, at := range b.leases.expiry {
			due[id] = at
		}
		b.leases.mu.Unlock()
		for id, at := range due {
			ctx, cancel := context.WithTimeout(context.Background(), interval)
			err := b.moveShutdown(ctx, id, b.leased(at))
			cancel()
			switch {
			case apierrors.IsNotFound(err):
				b.dropLease(id)
			case err != nil:
				b.log.Warn("renew a sandbox's lease", "id", id, "err", err)
			}
		}
	}
}

// leaseHeld reports whether this backend renews the sandbox id's lease:
// it made or claimed it.
func (b *Backend) leaseHeld(id string) bool {
	b.leases.mu.Lock()
	defer b.leases.mu.Unlock()
	_, ok := b.leases.expiry[id]
	return ok
}
