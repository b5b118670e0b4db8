package sandbox

import (
	"strconv"
	"time"
)

// volumeGrace is how long an unused volume is left alone whatever its
// labels say. The backend makes a sandbox's volumes in the same call as its
// container, so one of ours is never unused while a live server still
// means to attach it; the grace covers engines and older servers that
// create the volume first and the container a moment later.
const volumeGrace = 2 * time.Minute

// volumeSweep is what the orphan sweep knows besides the volume: the time,
// this host's name, an owner whose volumes are never swept (the caller's
// own), and whether a process of this host is alive.
type volumeSweep struct {
	now       time.Time
	hostname  string
	skipOwner string
	alive     func(pid int) bool
}

// orphanReason says why an unused volume may be removed, or "" when it
// must stay: another live server may still attach it.
//
// A volume of this host whose owner process is gone goes at once. Any
// other goes only after volumeGrace, and then only when nobody can still
// want it: its expiry has passed, or its owner cannot be asked (another
// host, or no owner labels at all, as volumes of old versions).
func (s volumeSweep) orphanReason(v VolumeInfo) string {
	owner := v.Labels[LabelOwner]
	if owner != "" && owner == s.skipOwner {
		return ""
	}
	pid, _ := strconv.Atoi(v.Labels[LabelOwnerPID])
	sameHost := pid > 0 && v.Labels[LabelOwnerHost] != "" && v.Labels[LabelOwnerHost] == s.hostname
	if sameHost && !s.alive(pid) {
		return "owner process gone"
	}
	created := v.Created
	if t, err := time.Parse(time.RFC3339Nano, v.Labels[LabelCreatedAt]); err == nil {
		created = t
	}
	if created.IsZero() || s.now.Sub(created) < volumeGrace {
		return ""
	}
	if exp, err := time.Parse(time.RFC3339, v.Labels[LabelExpiresAt]); err == nil && s.now.After(exp.Add(expiryGrace)) {
		return "expired"
	}
	if sameHost {
		return "" // its live owner removes it
	}
	return "unused past the grace period"
}
