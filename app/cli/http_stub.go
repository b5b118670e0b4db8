package cli

import (
	"context"
	"errors"
	"log/slog"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// serveHTTP serves streamable HTTP; see issue 3.
func serveHTTP(ctx context.Context, e *Env, log *slog.Logger, srv *mcpserver.Server, s *setup, addr string, allowRemote bool) error {
	return errors.New("--http is not available yet")
}
