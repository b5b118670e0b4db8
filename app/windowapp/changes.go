//go:build cgo

package windowapp

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// The Changes tab: the proposals (propose_changes) waiting in the state
// directory for the person. One whose server waits (proposal.ByServer:
// the tray put it to the person) gets the person's decision, and its
// server applies it; one whose call returned pending (proposal.ByWindow)
// the window applies itself, through the fence and roots of the config
// in force, as the server would, and records the outcome in the audit
// log.

// watchProposals reloads the Changes tab when the proposals change.
func (a *App) watchProposals(ctx context.Context) {
	dir, err := proposal.Dir(a.st)
	if err != nil {
		a.log.Warn("the Changes tab is not kept up to date", "err", err)
		return
	}
	if err := dirwatch.Watch(ctx, dir, 200*time.Millisecond, func() { a.do(a.win.Changes.Reload) }); err != nil {
		a.log.Warn("watch the proposals folder", "err", err)
	}
}

// listProposals is the Changes tab's list.
func (a *App) listProposals() []*proposal.Proposal { return proposal.List(a.st, time.Now()) }

// decideProposal is the Changes tab's Apply (apply) or Reject.
func (a *App) decideProposal(ctx context.Context, id string, apply bool) (string, error) {
	p, err := proposal.Load(a.st, id)
	if err != nil {
		return "", fmt.Errorf("%w; it was answered or expired already", err)
	}
	choice := state.ChoiceDeny
	if apply {
		choice = state.ChoiceAllow
	}
	if p.AppliedBy != proposal.ByWindow {
		if err := proposal.Decide(a.st, id, choice, time.Now()); err != nil {
			return "", err
		}
		if apply {
			return "Applied by the assistant's server, which waited for your answer; it reports the outcome to the assistant.", nil
		}
		return "Rejected: nothing on your disk changed.", nil
	}
	defer proposal.Drop(a.st, id)
	if !apply {
		a.auditProposal(p, proposal.StatusDeclined, "")
		return "Rejected: nothing on your disk changed.", nil
	}
	if !time.Now().Before(p.Deadline) {
		return "", errors.New("this proposal expired and was rejected; ask the assistant to propose the changes again")
	}
	cfg := a.cfg.Current()
	res, err := proposal.Apply(ctx, p, proposal.ApplyOptions{Fence: hostcopy.Fence(cfg), ApplyRoots: cfg.Files.ApplyRootsOrRead(),
		BackupDir: proposal.BackupDir(a.st.Dir())})
	switch {
	case res.Status == proposal.StatusStale:
		a.auditProposal(p, res.Status, "")
		return res.Text, nil
	case err != nil:
		a.auditProposal(p, "failed", err.Error())
		return "", err
	}
	a.auditProposal(p, res.Status, "")
	line := res.Text
	if len(res.Backups) > 0 {
		line += fmt.Sprintf(" Backups: %s.", filepath.Dir(res.Backups[0]))
	}
	return line, nil
}

// auditProposal records what the window did with p in the audit log (the
// Activity tab), as a server records its calls.
func (a *App) auditProposal(p *proposal.Proposal, status, errText string) {
	e := state.AuditEntry{Time: time.Now(), Client: "MCP Sandbox window", Tool: "propose_changes", SandboxID: p.SandboxID,
		Summary: fmt.Sprintf("%s: %d files to %s (proposal %s)", status, len(p.Files), p.HostPath, p.ID),
		Error:   errText != "", ErrorText: errText}
	if err := a.st.Audit(e); err != nil {
		a.log.Warn("write audit log", "err", err)
	}
}
