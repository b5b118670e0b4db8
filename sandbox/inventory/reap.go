package inventory

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Reap removes the managed containers of st's installation whose owner is
// proved gone, and those whose owner, alive, let them pass their expiry
// (counted from last use), with their records and the unused volumes of
// gone owners. With no state directory nothing can be proved, and nothing
// is removed.
func Reap(ctx context.Context, be backend.Backend, st *state.Store, req ReapRequest) (ReapResult, error) {
	now := req.Now
	if now.IsZero() {
		now = time.Now()
	}
	ids, err := reap(ctx, be, st, req.Self, now)
	return ReapResult{Removed: ids}, err
}

// ReapRequest says whose objects Reap spares.
type ReapRequest struct {
	// Self is an owner id whose objects are never reaped (the caller's
	// own, or "").
	Self string
	// Now is the time ages are judged by (zero: the clock's).
	Now time.Time
}

// ReapResult is what Reap reports.
type ReapResult struct {
	// Removed lists the ids of the sandboxes removed.
	Removed []string
}

// reap is Reap; it returns the ids it removed.
func reap(ctx context.Context, be backend.Backend, st *state.Store, self string, now time.Time) ([]string, error) {
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
	var removed []string
	var errs []error
	present := map[string]bool{}
	for _, c := range list {
		id := c.Labels[backend.LabelID]
		present[id] = true
		why := orphanReason(c, proof, now)
		if why == "" {
			continue
		}
		if err := be.Remove(ctx, c.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove orphan %s (%s): %w", c.Name, why, err))
			continue
		}
		if id != "" { // a probe is no sandbox and has no record
			removed = append(removed, id)
			_ = st.RemoveRecord(id)
		}
	}
	if recs, err := st.Records(); err == nil {
		for _, r := range recs {
			if !present[r.ID] {
				_ = st.RemoveRecord(r.ID)
			}
		}
	}
	sweep := volumeSweep{proof: proof, now: now}
	if _, err := be.RemoveOrphanVolumes(ctx, func(v backend.VolumeInfo) bool { return sweep.orphanReason(v) != "" }); err != nil {
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
// A probe (backend.AbandonedProbe) past its lifetime goes, whoever made it.
func orphanReason(c backend.ContainerInfo, p *ownerProof, now time.Time) string {
	if backend.AbandonedProbe(c.Labels, c.Created, now) {
		return "a probe abandoned by its maker"
	}
	if !Mine(c.Labels, p.installation) || c.Labels[backend.LabelOwner] == p.self {
		return ""
	}
	if p.gone(c.Labels) {
		return "owner gone"
	}
	r, err := p.st.ReadRecord(c.Labels[backend.LabelID])
	if err != nil || r.ContainerID != c.ID || r.Owner != c.Labels[backend.LabelOwner] || r.Busy || r.ExpiresAt.IsZero() {
		return ""
	}
	if now.After(r.ExpiresAt.Add(expiryGrace)) {
		return "idle past its expiry (last used " + r.LastUsed.UTC().Format(time.RFC3339) + ")"
	}
	return ""
}

// volumeSweep is what the orphan sweep knows besides the volume: who is
// proved gone, for this installation, and the time (probes' volumes go
// by age).
type volumeSweep struct {
	proof *ownerProof
	now   time.Time
}

// orphanReason says why an unused volume may be removed, or "" when it
// must stay. The rule is the containers': only a volume of this
// installation whose owner is proved gone goes (its owner took its lock
// before it made the volume, so a server still about to attach one is
// alive). Another installation's volume, one without the installation
// label (an older version's), and one of a live owner stay; a probe's
// past its lifetime goes, whoever made it.
func (s volumeSweep) orphanReason(v backend.VolumeInfo) string {
	if s.proof.gone(v.Labels) {
		return "owner gone"
	}
	created := v.Created
	if t, err := time.Parse(time.RFC3339Nano, v.Labels[backend.LabelCreatedAt]); err == nil {
		created = t
	}
	if backend.AbandonedProbe(v.Labels, created, s.now) {
		return "a probe's, abandoned by its maker"
	}
	return ""
}
