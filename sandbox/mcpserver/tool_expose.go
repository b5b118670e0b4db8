package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

type exposeArgs struct {
	SandboxID string `json:"sandbox_id"`
	Port      int    `json:"port" min:"1" max:"65535"`
	Close     bool   `json:"close,omitempty" jsonschema:"Stop exposing it."`
}

type exposeOutput struct {
	// URL opens the port from the host (empty after close).
	URL      string `json:"url"`
	HostPort int    `json:"host_port"`
	Port     int    `json:"port"`
	// Closed says a close: true found the port exposed and closed it.
	Closed bool `json:"closed,omitempty"`
}

func (s *Server) exposeTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_expose",
		description: "Serve a sandbox program's port (its 127.0.0.1) at a host loopback URL for the person's browser; the sandbox gets no network. HTTP, WebSocket.",
		annotations: annotations("Expose port", false, false, true, false),
		output:      outputSchema[exposeOutput]("url"),
	}, s.handleExpose)
}

func (s *Server) handleExpose(ctx context.Context, req mcp.CallToolRequest, a exposeArgs) (*mcp.CallToolResult, error) {
	if a.Close {
		res, err := s.eng.Unexpose(ctx, a.SandboxID, preview.ExposeRequest{Port: a.Port})
		if err != nil {
			return errorResult(err), nil
		}
		note(ctx, a.SandboxID, fmt.Sprintf("unexpose port %d", a.Port), nil)
		text := fmt.Sprintf("Port %d was not exposed.", a.Port)
		if res.Closed {
			text = fmt.Sprintf("Port %d is no longer exposed.", a.Port)
		}
		return mcp.NewToolResultStructured(exposeOutput{Port: a.Port, Closed: res.Closed}, text), nil
	}
	x, err := s.eng.Expose(ctx, a.SandboxID, preview.ExposeRequest{Port: a.Port})
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, a.SandboxID, fmt.Sprintf("expose port %d at %s", a.Port, x.URL), nil)
	text := fmt.Sprintf("Port %d of sandbox %s is at %s (nothing needs to listen yet; a request gets 502 until something does).", a.Port, a.SandboxID, x.URL)
	return mcp.NewToolResultStructured(exposeOutput{URL: x.URL, HostPort: x.HostPort, Port: x.Port}, text), nil
}
