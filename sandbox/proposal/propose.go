package proposal

import (
	"context"
	"errors"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// ProposeRequest is a propose_changes call as the tool gives it.
type ProposeRequest struct {
	// Path is the sandbox file or directory, resolved against /workspace.
	Path string
	// HostPath is the host file or directory it replaces or updates
	// (absolute or "~/…", below files.apply_roots).
	HostPath string
	Summary  string
	// Delete proposes deleting host files the sandbox's tree lacks.
	Delete bool
	// Ask puts p to the person, never the AI, and returns
	// state.ChoiceAllow (apply), state.ChoiceDeny (reject), or "" when
	// nobody can answer now: p then waits in the state directory
	// (p.AppliedBy = ByWindow) for the window to apply it. It may Save p
	// (the tray and the window show it). Nil: "".
	Ask func(ctx context.Context, p *Proposal) (string, error)
}

// SettleRequest is what Settle needs beside the proposal.
type SettleRequest struct {
	Ask func(ctx context.Context, p *Proposal) (string, error)
	// Store holds pending proposals and backups; nil: none kept.
	Store *state.Store
	// Policy is the fence in force when the person says yes (read then:
	// the config may change while they look).
	Policy func() ApplyOptions
}

// Settle asks the person about p and applies it on their yes; p is
// dropped from the store once decided. A pending Result means p waits for
// the window; a stale one (a host file changed) is a Result, not an error.
func Settle(ctx context.Context, p *Proposal, req SettleRequest) (Result, error) {
	if len(p.Files) == 0 {
		r := p.Result(StatusApplied)
		r.Text = "Nothing to change: the host already matches the sandbox."
		return r, nil
	}
	choice := ""
	if req.Ask != nil {
		var err error
		if choice, err = req.Ask(ctx, p); err != nil {
			drop(req.Store, p)
			return Result{}, err
		}
	}
	if choice == "" {
		return p.Result(StatusPending), nil
	}
	defer drop(req.Store, p)
	if choice != state.ChoiceAllow {
		return p.Result(StatusDeclined), nil
	}
	o := req.Policy()
	if req.Store != nil {
		o.BackupDir = BackupDir(req.Store.Dir())
	}
	res, err := Apply(ctx, p, o)
	if errors.Is(err, ErrStale) {
		return res, nil
	}
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

func drop(st *state.Store, p *Proposal) {
	if st != nil {
		Drop(st, p.ID)
	}
}
