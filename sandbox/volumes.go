package sandbox

// volumeSweep is what the orphan sweep knows besides the volume: who is
// proved gone, for this installation.
type volumeSweep struct {
	proof *ownerProof
}

// orphanReason says why an unused volume may be removed, or "" when it
// must stay. The rule is the containers': only a volume of this
// installation whose owner is proved gone goes (its owner took its lock
// before it made the volume, so a server still about to attach one is
// alive). Another installation's volume, one without the installation
// label (an older version's), and one of a live owner stay.
func (s volumeSweep) orphanReason(v VolumeInfo) string {
	if s.proof.gone(v.Labels) {
		return "owner gone"
	}
	return ""
}
