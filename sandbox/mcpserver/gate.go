package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// gate answers every tool call with Options.Gate's error while it has
// one: a config file that does not load, a cluster that did not answer at
// start. The server keeps answering initialize and tools/list meanwhile,
// so the AI client shows the cause instead of a closed pipe.
func (s *Server) gate(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if s.unavailable != nil {
			if err := s.unavailable(); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
		}
		return next(ctx, req)
	}
}
