package sandbox

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// ProposeChangesRequest is a propose_changes call.
type ProposeChangesRequest struct {
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
	// (p.AppliedBy = proposal.ByWindow) for the window to apply it. It
	// may Save p (the tray and the window show it). Nil: "".
	Ask func(ctx context.Context, p *proposal.Proposal) (string, error)
}

// ProposeChanges compares a sandbox file or directory with the host's
// through the fences of copy_in and copy_out (by identity, both deny
// lists, no host symlink followed, below files.apply_roots), asks the
// person (req.Ask) and applies the changes on their yes: each file
// atomically, after a backup of what it replaces, and none if a host
// file changed since the proposal was built (stale). A proposal onto a
// protected place is refused (ErrPolicy) before anyone is asked.
func (e *Engine) ProposeChanges(ctx context.Context, id string, req ProposeChangesRequest) (proposal.Result, error) {
	p, err := e.buildProposal(ctx, id, req)
	if err != nil {
		return proposal.Result{}, err
	}
	if len(p.Files) == 0 {
		r := p.Result(proposal.StatusApplied)
		r.Text = "Nothing to change: the host already matches the sandbox."
		return r, nil
	}
	choice := ""
	if req.Ask != nil {
		if choice, err = req.Ask(ctx, p); err != nil {
			e.dropProposal(p)
			return proposal.Result{}, err
		}
	}
	if choice == "" {
		return p.Result(proposal.StatusPending), nil
	}
	defer e.dropProposal(p)
	if choice != state.ChoiceAllow {
		return p.Result(proposal.StatusDeclined), nil
	}
	res, err := e.ApplyProposal(ctx, p)
	if errors.Is(err, proposal.ErrStale) {
		return res, nil
	}
	if err != nil {
		return proposal.Result{}, e.classes().HostErr(err)
	}
	return res, nil
}

// buildProposal reads the sandbox's tree (the same archive copy_out
// reads: the image's tar as the sandbox user, or the backend's archive
// call) and builds the proposal.
func (e *Engine) buildProposal(ctx context.Context, id string, req ProposeChangesRequest) (*proposal.Proposal, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return nil, err
	}
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return nil, err
	}
	cfg := e.cfg.Current()
	f := hostcopy.Fence(cfg)
	// Refused before the sandbox is read, and before anyone is asked.
	if _, err := f.ApplyPath(req.HostPath, cfg.Files.ApplyRootsOrRead()); err != nil {
		return nil, e.classes().HostErr(err)
	}
	e.begin(sb)
	defer e.end(sb)
	box := e.box(sb)
	src, err := box.Resolve(ctx, clean, true)
	if err != nil {
		return nil, err
	}
	rc, err := box.TarFrom(ctx, src)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	p, err := proposal.Build(ctx, rc, proposal.Request{SandboxID: sb.ID, HostPath: req.HostPath, Summary: req.Summary,
		Delete: req.Delete, Fence: f, ApplyRoots: cfg.Files.ApplyRootsOrRead()})
	if err != nil {
		return nil, e.classes().HostErr(err)
	}
	sb.transcript.add("propose_changes", fmt.Sprintf("%s -> host %s (%d files, proposal %s)", src, p.HostPath, len(p.Files), p.ID), nil, "")
	return p, nil
}

// ApplyProposal writes p to the host through the fence in force (the
// person said yes), keeping backups in the state directory. A host file
// changed since p was built gives a stale Result and proposal.ErrStale.
func (e *Engine) ApplyProposal(ctx context.Context, p *proposal.Proposal) (proposal.Result, error) {
	cfg := e.cfg.Current()
	o := proposal.ApplyOptions{Fence: hostcopy.Fence(cfg), ApplyRoots: cfg.Files.ApplyRootsOrRead()}
	if e.st != nil {
		o.BackupDir = proposal.BackupDir(e.st.Dir())
	}
	return proposal.Apply(ctx, p, o)
}

func (e *Engine) dropProposal(p *proposal.Proposal) {
	if e.st != nil {
		proposal.Drop(e.st, p.ID)
	}
}

// Proposals are the proposals waiting for the person's review.
func (e *Engine) Proposals() []*proposal.Proposal {
	if e.st == nil {
		return nil
	}
	return proposal.List(e.st, time.Now())
}
