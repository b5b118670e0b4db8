package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type stopArgs struct {
	SandboxID string `json:"sandbox_id,omitempty"`
	All       bool   `json:"all,omitempty" jsonschema:"All of this session's."`
}

type stopOutput struct {
	Stopped []string `json:"stopped"`
}

func (s *Server) stopTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_stop",
		description: "Stop and remove a sandbox and its files.",
		annotations: annotations("Stop sandbox", false, true, true, false),
		output:      outputSchema[stopOutput]("stopped"),
	}, s.handleStop)
}

func (s *Server) handleStop(ctx context.Context, req mcp.CallToolRequest, a stopArgs) (*mcp.CallToolResult, error) {
	out := stopOutput{Stopped: []string{}}
	switch {
	case a.All && a.SandboxID != "":
		return mcp.NewToolResultError("pass either sandbox_id or all: true, not both"), nil
	case a.All:
		res, err := s.eng.StopAll(ctx, sandbox.StopRequest{})
		out.Stopped = append(out.Stopped, res.Stopped...)
		if err != nil {
			return errorResult(err), nil
		}
	case a.SandboxID != "":
		res, err := s.eng.Stop(ctx, a.SandboxID, sandbox.StopRequest{})
		if err != nil {
			return errorResult(err), nil
		}
		out.Stopped = append(out.Stopped, res.Stopped...)
	default:
		return mcp.NewToolResultError("pass sandbox_id (sandbox_list shows them) or all: true"), nil
	}
	note(ctx, a.SandboxID, fmt.Sprintf("stopped %d", len(out.Stopped)), nil)
	text := "No sandboxes to stop."
	if len(out.Stopped) > 0 {
		text = "Stopped " + strings.Join(out.Stopped, ", ") + "."
	}
	return mcp.NewToolResultStructured(out, text), nil
}
