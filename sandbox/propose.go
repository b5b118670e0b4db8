package sandbox

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
)

// ProposeChanges offers a sandbox file or directory as changes to the
// host's: read through copy_out's archive, built and settled in package
// proposal. A protected host place is refused (ErrPolicy) before the
// sandbox is read or anyone is asked.
func (e *Engine) ProposeChanges(ctx context.Context, id string, req proposal.ProposeRequest) (proposal.Result, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return proposal.Result{}, err
	}
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return proposal.Result{}, err
	}
	cfg := e.cfg.Current()
	f, roots := hostcopy.Fence(cfg), cfg.Files.ApplyRootsOrRead()
	if _, err := f.ApplyPath(req.HostPath, roots); err != nil {
		return proposal.Result{}, e.classes().HostErr(err)
	}
	e.begin(sb)
	box := e.box(sb)
	src, err := box.Resolve(ctx, clean, true)
	if err != nil {
		e.end(sb)
		return proposal.Result{}, err
	}
	rc, err := box.TarFrom(ctx, src)
	if err != nil {
		e.end(sb)
		return proposal.Result{}, err
	}
	p, err := proposal.Build(ctx, rc, proposal.Request{SandboxID: sb.ID, HostPath: req.HostPath, Summary: req.Summary, Delete: req.Delete, Fence: f, ApplyRoots: roots})
	rc.Close()
	e.end(sb)
	if err != nil {
		return proposal.Result{}, e.classes().HostErr(err)
	}
	sb.transcript.add("propose_changes", fmt.Sprintf("%s -> host %s (%d files, proposal %s)", src, p.HostPath, len(p.Files), p.ID), nil, "")
	res, err := proposal.Settle(ctx, p, proposal.SettleRequest{Ask: req.Ask, Store: e.st, Policy: func() proposal.ApplyOptions {
		cfg := e.cfg.Current()
		return proposal.ApplyOptions{Fence: hostcopy.Fence(cfg), ApplyRoots: cfg.Files.ApplyRootsOrRead()}
	}})
	return res, e.classes().HostErr(err)
}

// Proposals are the proposals waiting for the person's review.
func (e *Engine) Proposals() []*proposal.Proposal {
	if e.st == nil {
		return nil
	}
	return proposal.List(e.st, time.Now())
}
