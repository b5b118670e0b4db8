package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// errorResult turns an engine error into an isError result whose text says
// what went wrong and what to do next. The classed errors already carry that
// advice and pass through as they are; shutdown and cancellation get words of
// their own; anything unclassed is named as the engine's failure.
func errorResult(err error) *mcp.CallToolResult {
	msg := err.Error()
	switch {
	case errors.Is(err, backend.ErrDockerUnreachable):
		// The message names the endpoint and the doctor command.
	case errors.Is(err, sandbox.ErrNotFound),
		errors.Is(err, sandbox.ErrPolicy),
		errors.Is(err, sandbox.ErrInvalid),
		errors.Is(err, sandbox.ErrLimit),
		errors.Is(err, sandbox.ErrPaused),
		errors.Is(err, backend.ErrImageNotFound),
		errors.Is(err, backend.ErrPull),
		errors.Is(err, backend.ErrWorkspace),
		errors.Is(err, preview.ErrNoAgent):
	case errors.Is(err, sandbox.ErrClosed):
		msg = "the server is shutting down; try again in a moment"
	case errors.Is(err, context.Canceled):
		// The client's notifications/cancelled (or its stream closing):
		// no engine failure, and nothing went on running.
		msg = "cancelled by the client"
	default:
		msg = "the sandbox engine failed: " + msg
	}
	return mcp.NewToolResultError(msg)
}

// invalidArgs is the result for arguments that do not bind to the tool's
// parameters (the schema validator catches most before this).
func invalidArgs(err error) *mcp.CallToolResult {
	return mcp.NewToolResultError(fmt.Sprintf("invalid arguments: %v", err))
}

// A sandbox_exec or run_code result carries the output once: in its text
// content, which every client reads. Its structuredContent carries the
// fields around it (exit code, duration, output_file, …); the output
// schema says where the output is.

// withoutOutput is r as its structuredContent: the output left out.
func withoutOutput(r sandbox.ExecResult) sandbox.ExecResult {
	r.Stdout, r.Stderr = "", ""
	return r
}

// execText renders an exec result: the output, and the fields a reader
// of the text alone needs.
func execText(r sandbox.ExecResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "exit_code: %d (%d ms)", r.ExitCode, r.DurationMS)
	if r.TimedOut {
		b.WriteString(", timed out")
	}
	if r.OOMKilled {
		b.WriteString(", killed for memory")
	}
	if r.Truncated {
		b.WriteString(", output truncated")
	}
	b.WriteByte('\n')
	if r.Stdout != "" {
		b.WriteString("--- stdout\n" + r.Stdout)
		if !strings.HasSuffix(r.Stdout, "\n") {
			b.WriteByte('\n')
		}
	}
	if r.Stderr != "" {
		b.WriteString("--- stderr\n" + r.Stderr)
		if !strings.HasSuffix(r.Stderr, "\n") {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
