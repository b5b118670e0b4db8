package sandbox

import (
	"testing"

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
	sweep := volumeSweep{proof: newOwnerProof(st, inst, "me")}
	labels := func(installation, owner string) map[string]string {
		l := map[string]string{LabelManaged: "true", LabelOwner: owner, LabelOwnerHost: "here", LabelOwnerPID: "1"}
		if installation != "" {
			l[LabelInstallation] = installation
		}
		return l
	}
	tests := []struct {
		name   string
		v      VolumeInfo
		remove bool
	}{
		{"this installation, owner gone", VolumeInfo{Labels: labels(inst, "goneowner")}, true},
		{"this installation, owner alive (lock held)", VolumeInfo{Labels: labels(inst, "liveowner")}, false},
		{"this installation, the sweeper's own", VolumeInfo{Labels: labels(inst, "me")}, false},
		{"this installation, no owner label", VolumeInfo{Labels: labels(inst, "")}, false},
		{"this installation, owner id naming no file", VolumeInfo{Labels: labels(inst, "../x")}, false},
		{"another installation, owner gone here", VolumeInfo{Labels: labels("0123456789abcdef0123456789abcdef", "goneowner")}, false},
		{"no installation label (an older version's)", VolumeInfo{Labels: labels("", "goneowner")}, false},
		{"no labels at all", VolumeInfo{}, false},
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
