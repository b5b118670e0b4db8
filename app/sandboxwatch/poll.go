package sandboxwatch

import (
	"context"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// PollSource is the Source of a backend without an events stream (the
// Kubernetes backend): the Lister's list and the backend's usage, both
// through the backend contract, and a tick every Interval that has the
// model list again. A list that fails (the cluster does not answer) is
// the snapshot's Err until one succeeds; the stream itself never ends
// with an error, so the model keeps polling.
type PollSource struct {
	Lister inventory.Lister
	// Interval is the time between two lists; default 5s.
	Interval time.Duration
	// Timeout bounds one list, so that a cluster that stops answering
	// without closing its connections (a network gone) is shown as such
	// rather than waited for; default 20s.
	Timeout time.Duration
}

var _ Source = PollSource{}

// pollInterval is PollSource's default Interval: a sandbox started or
// stopped shows within it, and an idle cluster sees one list per
// interval from each tray and window.
const pollInterval = 5 * time.Second

// pollTimeout is PollSource's default Timeout.
const pollTimeout = 20 * time.Second

// List lists this installation's sandboxes (the Lister's State), without
// usage.
func (p PollSource) List(ctx context.Context) ([]inventory.Info, error) {
	d := p.Timeout
	if d <= 0 {
		d = pollTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	l := p.Lister
	l.Usage = false
	return l.List(ctx)
}

// Usage samples a sandbox's resource use through the backend.
func (p PollSource) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	return p.Lister.Backend.Usage(ctx, containerID)
}

// Events ticks every Interval until ctx is done.
func (p PollSource) Events(ctx context.Context) (<-chan Event, <-chan error) {
	d := p.Interval
	if d <= 0 {
		d = pollInterval
	}
	out := make(chan Event, 1)
	go func() {
		t := time.NewTicker(d)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				select {
				case out <- Event{Action: "poll"}:
				default: // a list is coming anyway
				}
			}
		}
	}()
	return out, make(chan error)
}
