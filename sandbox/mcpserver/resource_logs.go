package mcpserver

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// addLogsResource serves sandbox://{id}/logs: the transcript of what ran in
// a sandbox, then (an allowlist sandbox) its newest connections.
func (s *Server) addLogsResource() {
	tmpl := mcp.NewResourceTemplate("sandbox://{id}/logs", "sandbox-logs",
		mcp.WithTemplateTitle("Sandbox transcript"),
		mcp.WithTemplateDescription("What ran in a sandbox (commands, code, exit codes, truncated output), newest last; then its newest network connections (host, port, allowed or why refused, bytes, duration)."),
		mcp.WithTemplateMIMEType("text/plain"),
	)
	s.mcp.AddResourceTemplate(tmpl, s.readLogs)
}

func (s *Server) readLogs(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	id := strings.TrimSuffix(strings.TrimPrefix(req.Params.URI, "sandbox://"), "/logs")
	sb, err := s.eng.Lookup(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", req.Params.URI, err)
	}
	text := sb.Transcript()
	if text == "" {
		text = "(nothing has run in this sandbox yet)\n"
	}
	text += s.eng.NetworkLog(id) // its proxied connections, bounded
	return []mcp.ResourceContents{mcp.TextResourceContents{URI: req.Params.URI, MIMEType: "text/plain", Text: text}}, nil
}
