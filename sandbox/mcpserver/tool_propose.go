package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

type proposeArgs struct {
	sandboxRef
	Path     string `json:"path"`
	HostPath string `json:"host_path" jsonschema:"Absolute or ~/…"`
	Summary  string `json:"summary,omitempty"`
	Delete   bool   `json:"delete,omitempty" jsonschema:"Delete host files it lacks."`
}

func (s *Server) proposeTool() toolDef {
	return defineTool(spec{
		name:        "propose_changes",
		description: "Offer sandbox files as changes to the host's; the person reviews the diff, then applies or rejects.",
		annotations: annotations("Propose changes", false, true, false, false),
		output:      outputSchema[proposal.Result]("status"),
	}, s.handlePropose)
}

func (s *Server) handlePropose(ctx context.Context, req mcp.CallToolRequest, a proposeArgs) (*mcp.CallToolResult, error) {
	what := fmt.Sprintf("propose_changes %s -> host %s", oneLine(a.Path, 200), oneLine(a.HostPath, 200))
	note(ctx, a.SandboxID, what, nil)
	res, err := s.eng.ProposeChanges(ctx, a.SandboxID, sandbox.ProposeChangesRequest{Path: a.Path, HostPath: a.HostPath,
		Summary: printable.Clean(a.Summary, 300), Delete: a.Delete, Ask: s.askProposal})
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, "", fmt.Sprintf("%s: %s, %d files (proposal %s)", what, res.Status, len(res.Files), res.ProposalID), nil)
	if res.Files == nil {
		res.Files = []proposal.FileResult{}
	}
	return mcp.NewToolResultStructured(res, res.Text), nil
}

// The choices of a proposal's form: never "always".
const (
	choiceApply  = "apply"
	choiceReject = "reject"
)

// askProposal puts p to the person: through elicitation to the client
// that asked, else through the tray when one listens (p waits in the
// state directory; this call waits for the answer), else nobody now: p
// waits for the window, which applies it ("": pending).
func (s *Server) askProposal(ctx context.Context, p *proposal.Proposal) (string, error) {
	if sess := canElicit(server.ClientSessionFromContext(ctx)); sess != nil && !overHTTP(ctx) {
		p.AppliedBy = proposal.ByServer
		return s.elicitProposal(ctx, sess, p), nil
	}
	if s.st == nil {
		return "", errors.New("nobody can review this proposal: the client cannot be asked and the server has no state directory; copy_out the files for the person instead")
	}
	p.AppliedBy = proposal.ByWindow
	if s.st.AskListening() {
		p.AppliedBy = proposal.ByServer
	}
	if err := proposal.Save(s.st, p); err != nil {
		return "", err
	}
	if p.AppliedBy == proposal.ByWindow {
		return "", nil
	}
	s.log.Info("a proposal waits for the person in the tray", "proposal", p.ID, "sandbox", p.SandboxID)
	return proposal.Await(ctx, s.st, p, trayPoll)
}

// elicitProposal asks in sess until p's deadline: only the person's
// Apply is state.ChoiceAllow; a decline, a Reject, a cancel, an error
// and no answer in time are state.ChoiceDeny.
func (s *Server) elicitProposal(ctx context.Context, sess server.SessionWithElicitation, p *proposal.Proposal) string {
	ctx, cancel := context.WithDeadline(ctx, p.Deadline)
	defer cancel()
	schema := choiceSchema(protocolOf(sess), []string{choiceApply, choiceReject}, []string{"Apply", "Reject"})
	// The diff is the sandbox's text: no escape sequence or bidi control
	// reaches the person's screen.
	action, got, err := elicitChoice(ctx, sess, printable.Text(p.Message(0), 8<<10), schema)
	s.log.Info("asked a person about a proposal", "proposal", p.ID, "action", action, "answer", got, "err", err)
	if err == nil && action == mcp.ElicitationResponseActionAccept && got == choiceApply && time.Now().Before(p.Deadline) {
		return state.ChoiceAllow
	}
	return state.ChoiceDeny
}
