package inventory

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// StopRequest says which managed sandbox Stop removes, and whose it may be.
type StopRequest struct {
	// ID is the sandbox's id.
	ID string
	// AllUsers lets it stop another installation's sandbox (or one
	// without the installation label): the person asked for it and
	// confirmed.
	AllUsers bool
}

// StopResult is what Stop reports.
type StopResult struct {
	// Stopped lists the ids of the sandboxes removed.
	Stopped []string
}

var (
	// ErrNotMine is returned for an action on another installation's
	// sandbox without StopRequest.AllUsers.
	ErrNotMine = errors.New("another installation's sandbox")
	// ErrNotFound: no managed sandbox of that id on the engine, whoever's.
	ErrNotFound = errors.New("no managed sandbox")
)

// Stop removes a managed sandbox by id, whichever server of this
// installation (st's) made it; another installation's only with AllUsers
// (for `mcp-sandbox stop`, the tray and the window).
func Stop(ctx context.Context, be backend.Backend, st *state.Store, req StopRequest) (StopResult, error) {
	inst, err := Installation(st)
	if err != nil {
		return StopResult{}, err
	}
	list, err := be.List(ctx)
	if err != nil {
		return StopResult{}, err
	}
	id := req.ID
	for _, c := range list {
		if c.Labels[backend.LabelID] != id || c.Labels[backend.LabelHelper] != "" {
			continue
		}
		if !Mine(c.Labels, inst) && !req.AllUsers {
			return StopResult{}, fmt.Errorf("%w: sandbox %s was made by another MCP Sandbox installation (another user's, or a server with another state directory); `mcp-sandbox stop --all-users %s` stops it", ErrNotMine, id, id)
		}
		if err := be.Remove(ctx, c.ID); err != nil {
			return StopResult{}, err
		}
		if st != nil {
			_ = st.RemoveRecord(id)
		}
		return StopResult{Stopped: []string{id}}, nil
	}
	return StopResult{}, fmt.Errorf("%w %q; `mcp-sandbox ps` lists them", ErrNotFound, printable.Clean(id, printable.NameMax))
}

// UnclaimedPool reports whether c is a warm-pool container nobody has
// claimed yet (the tray counts those as "warm", not as sandboxes):
// claiming renames it from PoolNamePrefix to NamePrefix.
func UnclaimedPool(c backend.ContainerInfo) bool {
	return c.Labels[backend.LabelPool] == "true" && strings.HasPrefix(c.Name, backend.PoolNamePrefix)
}
