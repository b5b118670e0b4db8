package trayapp

import (
	"context"
	"fmt"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
)

// Changes an assistant proposes to the person's files (propose_changes)
// wait in the state directory's proposals folder (sandbox/proposal) when
// its client cannot ask: the tray counts them in its menu and title
// ("1 change waiting for review"), notifies each new one, and opens the
// window on them, where the person reads the whole diff and applies or
// rejects it.

// watchProposals follows the proposals folder until ctx is done.
func (a *App) watchProposals(ctx context.Context) {
	dir, err := proposal.Dir(a.st)
	if err != nil {
		a.log.Warn("changes proposed for review are not shown in the menu", "err", err)
		return
	}
	seen := map[string]bool{}
	a.refreshProposals(seen)
	go func() {
		t := time.NewTicker(askRecheck)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				a.refreshProposals(seen)
			}
		}
	}()
	if err := dirwatch.Watch(ctx, dir, 50*time.Millisecond, func() { a.refreshProposals(seen) }); err != nil {
		a.log.Warn("watch the proposals folder; proposals are read every few seconds", "err", err)
		<-ctx.Done()
	}
}

// refreshProposals counts the proposals waiting for review and notifies
// the new ones (seen: the ids notified; refreshes are serialized by
// proposalsMu).
func (a *App) refreshProposals(seen map[string]bool) {
	a.proposalsMu.Lock()
	defer a.proposalsMu.Unlock()
	list := proposal.List(a.st, time.Now())
	live := map[string]bool{}
	for _, p := range list {
		live[p.ID] = true
		if !seen[p.ID] {
			seen[p.ID] = true
			a.log.Info("changes wait for the person's review", "proposal", p.ID, "sandbox", p.SandboxID, "files", len(p.Files))
			a.notify(proposalNote(p))
		}
	}
	for id := range seen {
		if !live[id] {
			delete(seen, id)
		}
	}
	a.update(func(s *trayState) { s.proposals = len(list) })
}

// proposalNote is a proposal's notification: what changes where, and
// where to review it.
func proposalNote(p *proposal.Proposal) string {
	s := fmt.Sprintf("An assistant proposes %d file change(s) to %s", len(p.Files), printable.Clean(p.HostPath, 300))
	if p.Summary != "" {
		s += ": " + printable.Clean(p.Summary, 200)
	}
	return s + ". Review it in the MCP Sandbox window (Changes)."
}
