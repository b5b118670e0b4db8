package mcpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// ProbeHandler returns the HTTP handler (origin check, token, delivery
// tracking: the real chain) of a server whose one tool, "probe", needs no
// Docker. Called with {"n": N}, it reports "start N\n" as output, pauses,
// reports "last N\n" and returns both as its stdout (as sandbox_exec
// does, in the text): through the same
// progress reporter as sandbox_exec, so the first line goes out at once
// and the last is sent by flush just before the result, the moment a racy
// transport loses it.
func ProbeHandler(token string, pause time.Duration) http.Handler {
	return probeServer(pause).newHTTPHandler(token, nil)
}

// ServeProbe serves the probe server of ProbeHandler on ln as
// ServeStreamableHTTP does (its listener caps and timeouts included).
func ServeProbe(ctx context.Context, ln net.Listener, token string, pause time.Duration) error {
	return probeServer(pause).ServeStreamableHTTP(ctx, ln, HTTPOptions{Token: token})
}

// SetBodyTimeout sets how long a request body may take and returns a
// function that restores the old value. Call it while no server runs.
func SetBodyTimeout(d time.Duration) (restore func()) {
	old := httpBodyTimeout
	httpBodyTimeout = d
	return func() { httpBodyTimeout = old }
}

func probeServer(pause time.Duration) *Server {
	s := &Server{log: slog.New(slog.DiscardHandler), mcp: server.NewMCPServer("probe", "1.0", server.WithToolCapabilities(false))}
	s.mcp.AddTool(mcp.NewTool("probe", mcp.WithNumber("n", mcp.Required())),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			n := req.GetInt("n", 0)
			p := newProgress(ctx, req)
			first, last := fmt.Sprintf("start %d\n", n), fmt.Sprintf("last %d\n", n)
			p.output("stdout", []byte(first))
			time.Sleep(pause)
			p.output("stdout", []byte(last))
			p.flush()
			res := sandbox.ExecResult{Stdout: first + last}
			return mcp.NewToolResultStructured(withoutOutput(res), execText(res)), nil
		})
	// hold reports "holding" and waits out the pause unless its call is
	// cancelled first (for the cancellation tests).
	s.mcp.AddTool(mcp.NewTool("hold"),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			p := newProgress(ctx, req)
			p.output("stdout", []byte("holding\n"))
			select {
			case <-time.After(pause):
				p.flush()
				return mcp.NewToolResultText("held"), nil
			case <-ctx.Done():
				return errorResult(ctx.Err()), nil
			}
		})
	return s
}

// SetDeliveryTimeout sets how long a call waits for its progress to be
// written (0: not at all, mcp-go's behaviour) and returns a function that
// restores the old value. Call it while no server is running.
func SetDeliveryTimeout(d time.Duration) (restore func()) {
	old := deliveryTimeout
	deliveryTimeout = d
	return func() { deliveryTimeout = old }
}
