package inventory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
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
	return installation != "" && labels[backend.LabelInstallation] == installation
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
	owner := labels[backend.LabelOwner]
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

// Pacing of RemoveOwner: how long it waits between passes that found
// something (or failed), at first and at most, and how many passes in a
// row must find nothing before it is done.
const (
	ownerRetryFirst = 500 * time.Millisecond
	ownerRetryMax   = 5 * time.Second
	ownerCleanPass  = time.Second
	ownerSettled    = 3
)

// RemoveOwner removes everything of the server instance owner (its
// io.mcp-sandbox.owner label): its sandboxes, its warm pool, its helper
// containers, and their volumes, and the records of the sandboxes it
// removed. It is what the watchdog of a server that died runs
// (sandbox/server's Watch): nothing of a dead server waits for the next
// server's reaping.
//
// It works in passes and returns once ownerSettled passes in a row, a
// second apart, found nothing and failed in nothing: a container whose
// create the engine was still carrying out when its server died appears a
// moment later, and is caught. A pass that fails (the engine away) is
// tried again, further apart each time, until ctx ends; the caller bounds
// it. It returns the sandbox ids it removed and, when ctx ended first,
// what stopped it.
func RemoveOwner(ctx context.Context, be backend.Backend, st *state.Store, owner string, log *slog.Logger) ([]string, error) {
	if owner == "" {
		return nil, errors.New("remove owner: no owner id")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var removed []string
	var last error
	clean := 0
	wait := ownerRetryFirst
	for {
		ids, found, err := removeOwnerPass(ctx, be, st, owner)
		removed = append(removed, ids...)
		if found > 0 {
			log.Info("removed what a server that is gone left", "owner", owner, "sandboxes", ids, "found", found)
		}
		switch {
		case err != nil:
			clean, last = 0, err
			log.Warn("remove a gone server's sandboxes; trying again", "owner", owner, "err", err, "in", wait)
		case found > 0:
			clean, wait = 0, ownerRetryFirst
		default:
			clean++
			wait = ownerCleanPass
			if clean >= ownerSettled {
				if st != nil {
					// Its lock file: nothing of the server is left for a
					// reaper to judge by it (removed only if its lock is free).
					st.ServerGone(owner)
				}
				return removed, nil
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			if last == nil {
				last = ctx.Err()
			}
			return removed, fmt.Errorf("remove the sandboxes of server %s: %w", owner, last)
		case <-t.C:
		}
		if err != nil {
			wait = min(2*wait, ownerRetryMax)
		}
	}
}

// RemoveOwnerOnce is one pass of RemoveOwner, without retries: for a
// server that said it removed everything itself, a check that costs one
// list of containers and volumes, and gives up at once on an engine that
// does not answer.
func RemoveOwnerOnce(ctx context.Context, be backend.Backend, st *state.Store, owner string, log *slog.Logger) ([]string, error) {
	if owner == "" {
		return nil, errors.New("remove owner: no owner id")
	}
	ids, found, err := removeOwnerPass(ctx, be, st, owner)
	if found > 0 && log != nil {
		log.Info("removed what a server that is gone left", "owner", owner, "sandboxes", ids, "found", found)
	}
	return ids, err
}

// removeOwnerPass removes, once, every container and unused volume of
// owner. found counts what it found (removed or not); ids are the sandbox
// ids of the containers it removed.
func removeOwnerPass(ctx context.Context, be backend.Backend, st *state.Store, owner string) (ids []string, found int, err error) {
	list, err := be.List(ctx)
	if err != nil {
		return nil, 0, fmt.Errorf("list containers: %w", err)
	}
	var errs []error
	for _, c := range list {
		if c.Labels[backend.LabelOwner] != owner {
			continue
		}
		found++
		if err := be.Remove(ctx, c.ID); err != nil {
			errs = append(errs, fmt.Errorf("remove %s: %w", c.Name, err))
			continue
		}
		if c.Labels[backend.LabelHelper] != "" {
			continue
		}
		id := c.Labels[backend.LabelID]
		ids = append(ids, id)
		if st != nil {
			_ = st.RemoveRecord(id)
		}
	}
	vols, err := be.RemoveOrphanVolumes(ctx, func(v backend.VolumeInfo) bool { return v.Labels[backend.LabelOwner] == owner })
	found += len(vols)
	if err != nil {
		errs = append(errs, fmt.Errorf("remove volumes: %w", err))
	}
	return ids, found, errors.Join(errs...)
}
