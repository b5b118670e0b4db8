package inventory

import (
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestVolumeSweep is the orphan sweep's rule for an unused volume: only a
// volume of this installation whose owner is proved gone goes; not seeing
// an owner (another installation, no labels, no owner) is never proof.
func TestVolumeSweep(t *testing.T) {
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	inst, err := st.InstallationID()
	if err != nil {
		t.Fatal(err)
	}
	live, err := st.LockServer("liveowner")
	if err != nil {
		t.Fatal(err)
	}
	defer live.Release()
	now := time.Now()
	sweep := volumeSweep{proof: newOwnerProof(st, inst, "me"), now: now}
	probe := func(created time.Time, stamp bool) backend.VolumeInfo {
		l := map[string]string{backend.LabelManaged: "true", backend.LabelHelper: backend.HelperProbe}
		if stamp {
			l[backend.LabelCreatedAt] = created.UTC().Format(time.RFC3339Nano)
			created = now // the label wins over the engine's date
		}
		return backend.VolumeInfo{Labels: l, Created: created}
	}
	labels := func(installation, owner string) map[string]string {
		l := map[string]string{backend.LabelManaged: "true", backend.LabelOwner: owner, backend.LabelOwnerHost: "here", backend.LabelOwnerPID: "1"}
		if installation != "" {
			l[backend.LabelInstallation] = installation
		}
		return l
	}
	tests := []struct {
		name   string
		v      backend.VolumeInfo
		remove bool
	}{
		{"this installation, owner gone", backend.VolumeInfo{Labels: labels(inst, "goneowner")}, true},
		{"this installation, owner alive (lock held)", backend.VolumeInfo{Labels: labels(inst, "liveowner")}, false},
		{"this installation, the sweeper's own", backend.VolumeInfo{Labels: labels(inst, "me")}, false},
		{"this installation, no owner label", backend.VolumeInfo{Labels: labels(inst, "")}, false},
		{"this installation, owner id naming no file", backend.VolumeInfo{Labels: labels(inst, "../x")}, false},
		{"another installation, owner gone here", backend.VolumeInfo{Labels: labels("0123456789abcdef0123456789abcdef", "goneowner")}, false},
		{"no installation label (an older version's)", backend.VolumeInfo{Labels: labels("", "goneowner")}, false},
		{"no labels at all", backend.VolumeInfo{}, false},
		{"a probe's, past its lifetime", probe(now.Add(-backend.ProbeLifetime-time.Minute), true), true},
		{"a probe's, past its lifetime by the engine's date", probe(now.Add(-backend.ProbeLifetime-time.Minute), false), true},
		{"a probe's, young", probe(now.Add(-time.Minute), true), false},
		{"a probe's, no date", probe(time.Time{}, false), false},
		{"a probe label on an unmanaged volume", backend.VolumeInfo{Labels: map[string]string{backend.LabelHelper: backend.HelperProbe}, Created: now.Add(-time.Hour)}, false},
		{"an install helper's of a live owner, old", backend.VolumeInfo{Labels: map[string]string{backend.LabelManaged: "true", backend.LabelHelper: "sbid", backend.LabelInstallation: inst, backend.LabelOwner: "liveowner"}, Created: now.Add(-time.Hour)}, false},
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
