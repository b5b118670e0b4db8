package sandbox

import (
	"strconv"
	"testing"
	"time"
)

// TestVolumeSweep is the orphan sweep's rule for an unused volume: it
// never takes one another live server may still attach.
func TestVolumeSweep(t *testing.T) {
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	const alivePID, deadPID = 100, 200
	sweep := volumeSweep{
		now: now, hostname: "here", skipOwner: "me",
		alive: func(pid int) bool { return pid == alivePID },
	}
	young := now.Add(-volumeGrace / 2)
	old := now.Add(-volumeGrace - time.Second)
	labels := func(owner, host string, pid int, created time.Time, expires time.Time) map[string]string {
		l := map[string]string{LabelManaged: "true", LabelOwner: owner, LabelOwnerHost: host}
		if pid > 0 {
			l[LabelOwnerPID] = strconv.Itoa(pid)
		}
		if !created.IsZero() {
			l[LabelCreatedAt] = created.Format(time.RFC3339Nano)
		}
		if !expires.IsZero() {
			l[LabelExpiresAt] = expires.Format(time.RFC3339)
		}
		return l
	}
	later, past := now.Add(time.Hour), now.Add(-expiryGrace-time.Minute)
	tests := []struct {
		name   string
		v      VolumeInfo
		remove bool
	}{
		{"this host, owner alive, young", VolumeInfo{Labels: labels("a", "here", alivePID, young, later)}, false},
		{"this host, owner alive, old", VolumeInfo{Labels: labels("a", "here", alivePID, old, later)}, false},
		{"this host, owner alive, old, expired", VolumeInfo{Labels: labels("a", "here", alivePID, old, past)}, true},
		{"this host, owner alive, young, expired", VolumeInfo{Labels: labels("a", "here", alivePID, young, past)}, false},
		{"this host, owner gone, young", VolumeInfo{Labels: labels("a", "here", deadPID, young, later)}, true},
		{"this host, owner gone, old", VolumeInfo{Labels: labels("a", "here", deadPID, old, later)}, true},
		{"other host, young", VolumeInfo{Labels: labels("a", "there", deadPID, young, later)}, false},
		{"other host, old", VolumeInfo{Labels: labels("a", "there", alivePID, old, later)}, true},
		{"other host, old, expired", VolumeInfo{Labels: labels("a", "there", alivePID, old, past)}, true},
		{"own volume, owner pid gone", VolumeInfo{Labels: labels("me", "here", deadPID, old, past)}, false},
		{"engine's creation time only, young", VolumeInfo{Labels: labels("a", "there", 0, time.Time{}, later), Created: young}, false},
		{"engine's creation time only, old", VolumeInfo{Labels: labels("a", "there", 0, time.Time{}, later), Created: old}, true},
		{"label's creation time wins over the engine's", VolumeInfo{Labels: labels("a", "there", 0, young, later), Created: old}, false},
		{"no creation time at all", VolumeInfo{Labels: labels("a", "there", 0, time.Time{}, past)}, false},
		{"no labels (an older version's), young", VolumeInfo{Created: young}, false},
		{"no labels (an older version's), old", VolumeInfo{Created: old}, true},
		{"no pid label on this host, old", VolumeInfo{Labels: labels("a", "here", 0, old, later)}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			why := sweep.orphanReason(tt.v)
			if got := why != ""; got != tt.remove {
				t.Errorf("remove = %v (%q), want %v", got, why, tt.remove)
			}
		})
	}
}
