package server

import (
	"context"
	"io"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// stdioGrace is how long the server waits, after a signal, for the stdio
// transport to wind down before it cleans up regardless.
const stdioGrace = 3 * time.Second

// serveStdio serves MCP on stdin and stdout until the client leaves
// (stdin ends, stdout breaks or stops taking writes) or a signal ends ctx.
// After a signal it waits for the transport at most stdioGrace: a client
// that stopped reading can hold a write, and clean-up never waits on it.
func serveStdio(ctx context.Context, log *slog.Logger, srv *mcpserver.Server, stdin io.Reader, stdout io.Writer) error {
	done := make(chan error, 1)
	stdin = pollStdin(stdin)
	go func() { done <- srv.ServeStdio(ctx, stdin, stdout) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(stdioGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		log.Warn("the stdio transport did not end after the signal; cleaning up without it")
		return nil
	}
}
