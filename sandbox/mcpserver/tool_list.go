package mcpserver

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
)

type listEntry struct {
	SandboxID string           `json:"sandbox_id"`
	Language  string           `json:"language"`
	Image     string           `json:"image"`
	State     string           `json:"state"`
	CreatedAt string           `json:"created_at"`
	ExpiresAt string           `json:"expires_at"`
	Limits    inventory.Limits `json:"limits"`
	Usage     usageOut         `json:"usage"`
	// Exec says how commands run: "agent" or "docker exec" (ExecNote says
	// why); absent before the sandbox's first command.
	Exec     string `json:"exec,omitempty"`
	ExecNote string `json:"exec_note,omitempty"`
	// Exposed lists the ports sandbox_expose made reachable.
	Exposed []exposedOut `json:"exposed"`
	Network networkOut   `json:"network"`
	// Processes are the background commands sandbox_exec started.
	Processes []sandbox.BackgroundProcess `json:"processes,omitempty"`
	// Proposals are the ids of its propose_changes waiting for review.
	Proposals []string `json:"proposals,omitempty"`
}

// networkOut is a sandbox's network: its mode, and for allowlist the
// entries its proxy allows, the hosts it refused lately (newest first)
// and the bytes it carried.
type networkOut struct {
	Mode     string               `json:"mode" jsonschema:"none (loopback only), allowlist (loopback only, with a proxy on 127.0.0.1:3128 that reaches the allowed hosts) or egress (a real network)"`
	Note     string               `json:"note"`
	Allowed  []string             `json:"allowed" jsonschema:"allowlist: the entries the sandbox may reach without asking"`
	Refused  []netproxy.HostCount `json:"refused" jsonschema:"allowlist: the host:port its proxy refused lately, newest first, with how often"`
	BytesIn  int64                `json:"bytes_in" jsonschema:"allowlist: bytes its proxy carried into the sandbox"`
	BytesOut int64                `json:"bytes_out" jsonschema:"allowlist: bytes its proxy carried out of the sandbox"`
}

// networkOf describes sandbox id's network; mode is Info's.
func (s *Server) networkOf(id, mode string) networkOut {
	n := s.eng.Network(id)
	if n.Mode == "" {
		n.Mode = mode
	}
	out := networkOut{Mode: n.Mode, Allowed: []string{}, Refused: []netproxy.HostCount{}}
	switch n.Mode {
	case sandbox.NetworkNone:
		out.Note = "no network: a loopback interface only"
	case sandbox.NetworkEgress:
		out.Note = "a real network: the sandbox may reach any host"
	case sandbox.NetworkAllowlist:
		out.Note = fmt.Sprintf("no network interface; programs reach the allowed hosts through the proxy at http://127.0.0.1:%d (HTTP_PROXY and HTTPS_PROXY name it)", netglue.ProxyPort)
	}
	if n.Allowed != nil {
		out.Allowed = n.Allowed
	}
	if n.Stats != nil {
		out.Refused = n.Stats.RefusedHosts
		out.BytesIn, out.BytesOut = n.Stats.BytesIn, n.Stats.BytesOut
	}
	return out
}

type exposedOut struct {
	Port int    `json:"port"`
	URL  string `json:"url"`
}

type usageOut struct {
	MemoryBytes uint64  `json:"memory_bytes"`
	CPUPercent  float64 `json:"cpu_percent"`
	Pids        uint64  `json:"pids"`
	// SampledAt is when the server last sampled the usage (it samples in
	// the background, so a list costs no stats calls); absent if never.
	SampledAt string `json:"sampled_at,omitempty"`
}

type listOutput struct {
	Sandboxes []listEntry `json:"sandboxes"`
}

func (s *Server) listTool() toolDef {
	tool := mcp.NewTool("sandbox_list",
		mcp.WithDescription("This session's sandboxes: limits, usage, network, exposed ports."),
		annotations("List sandboxes", true, false, true, false),
		noArgs(),
		outputSchema[listOutput]("sandboxes"),
	)
	return toolDef{tool: tool, handler: s.handleList}
}

func (s *Server) handleList(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	list, err := s.eng.List(ctx, sandbox.ListRequest{})
	if err != nil {
		return errorResult(err), nil
	}
	infos := list.Sandboxes
	pending := s.eng.Proposals()
	out := listOutput{Sandboxes: []listEntry{}}
	var b strings.Builder
	if len(infos) == 0 {
		b.WriteString("No sandboxes. Create one with sandbox_create, or use run_code without sandbox_id.")
	}
	for _, in := range infos {
		sampled := ""
		if !in.Usage.SampledAt.IsZero() {
			sampled = in.Usage.SampledAt.UTC().Format(time.RFC3339Nano)
		}
		out.Sandboxes = append(out.Sandboxes, listEntry{
			SandboxID: in.ID, Language: in.Language, Image: in.Image, State: in.State,
			CreatedAt: in.CreatedAt.UTC().Format(time.RFC3339), ExpiresAt: in.ExpiresAt.UTC().Format(time.RFC3339),
			Limits: in.Limits,
			Usage:  usageOut{MemoryBytes: in.Usage.MemoryBytes, CPUPercent: in.Usage.CPUPercent, Pids: in.Usage.Pids, SampledAt: sampled},
			Exec:   in.Exec, ExecNote: in.ExecNote, Exposed: []exposedOut{},
			Network: s.networkOf(in.ID, in.Network),
		})
		fmt.Fprintf(&b, "%s  %s  %s  mem %.1f/%d MB  cpu %.1f%%  pids %d/%d  expires %s\n",
			in.ID, in.Language, in.State, float64(in.Usage.MemoryBytes)/(1<<20), in.Limits.MemoryMB,
			in.Usage.CPUPercent, in.Usage.Pids, in.Limits.Pids, in.ExpiresAt.Format(time.Kitchen))
		if n := out.Sandboxes[len(out.Sandboxes)-1].Network; n.Mode == sandbox.NetworkAllowlist {
			fmt.Fprintf(&b, "  network allowlist (%s): %d B in, %d B out", strings.Join(n.Allowed, ", "), n.BytesIn, n.BytesOut)
			for i, r := range n.Refused {
				if i == 0 {
					b.WriteString("; refused:")
				}
				fmt.Fprintf(&b, " %s (%d)", r.Host, r.Count)
			}
			b.WriteString("\n")
		}
		for _, x := range s.eng.Exposed(in.ID) {
			last := &out.Sandboxes[len(out.Sandboxes)-1]
			last.Exposed = append(last.Exposed, exposedOut{Port: x.Port, URL: x.URL})
			fmt.Fprintf(&b, "  port %d at %s\n", x.Port, x.URL)
		}
		s.listProcesses(ctx, &out.Sandboxes[len(out.Sandboxes)-1], &b)
		listProposals(&out.Sandboxes[len(out.Sandboxes)-1], pending, &b)
	}
	note(ctx, "", fmt.Sprintf("%d sandboxes", len(infos)), nil)
	return mcp.NewToolResultStructured(out, strings.TrimRight(b.String(), "\n")), nil
}

// listProcesses adds e's background processes to the entry and the text.
func (s *Server) listProcesses(ctx context.Context, e *listEntry, b *strings.Builder) {
	e.Processes = s.eng.Processes(ctx, e.SandboxID)
	for _, p := range e.Processes {
		state := "exited"
		if p.Running {
			state = "running"
		}
		fmt.Fprintf(b, "  pid %d %s (log %s): %s\n", p.PID, state, p.LogPath, oneLine(p.Command, 80))
	}
}

// listProposals adds the proposals of e's sandbox that wait for review.
func listProposals(e *listEntry, pending []*proposal.Proposal, b *strings.Builder) {
	for _, p := range pending {
		if p.SandboxID == e.SandboxID {
			e.Proposals = append(e.Proposals, p.ID)
			fmt.Fprintf(b, "  proposal %s waits for review: %d files to %s\n", p.ID, len(p.Files), p.HostPath)
		}
	}
}
