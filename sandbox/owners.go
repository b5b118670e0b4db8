package sandbox

import (
	"fmt"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Whose is a sandbox? The one rule, for the server, the CLI and the tray:
// an object (container, helper, volume) is this installation's when its
// installation label is this state directory's installation id. Another
// id, or none (an object made before the label existed), is someone
// else's: another user's, or a server with another state directory. Only
// an explicit --all-users (with a confirmation) acts on those, and no
// reaper ever removes them: from here their owner cannot be seen, and not
// seeing an owner is not proof that it is gone.

// Mine reports whether an object with these labels belongs to the
// installation (an empty installation owns nothing).
func Mine(labels map[string]string, installation string) bool {
	return installation != "" && labels[LabelInstallation] == installation
}

// Installation returns the installation id of st's state directory, or ""
// for no state directory (which owns nothing).
func Installation(st *state.Store) (string, error) {
	if st == nil {
		return "", nil
	}
	id, err := st.InstallationID()
	if err != nil {
		return "", fmt.Errorf("installation: %w", err)
	}
	return id, nil
}

// ownerProof decides, for one reaping pass, whether the owner of an object
// of this installation is proved gone (state.Store.ServerGone), asking the
// state directory once per owner.
type ownerProof struct {
	st           *state.Store
	installation string
	self         string // the caller's own owner id: alive
	known        map[string]bool
}

func newOwnerProof(st *state.Store, installation, self string) *ownerProof {
	return &ownerProof{st: st, installation: installation, self: self, known: map[string]bool{}}
}

// gone reports whether the object's owner is proved gone: the object is
// this installation's, names an owner that is not the caller, and that
// owner's lock in the state directory is free or absent.
func (p *ownerProof) gone(labels map[string]string) bool {
	owner := labels[LabelOwner]
	if p.st == nil || !Mine(labels, p.installation) || owner == "" || owner == p.self {
		return false
	}
	g, ok := p.known[owner]
	if !ok {
		g = p.st.ServerGone(owner)
		p.known[owner] = g
	}
	return g
}
