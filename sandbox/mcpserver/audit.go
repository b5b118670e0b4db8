package mcpserver

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// auditNote is what a tool handler tells the audit log about its call.
type auditNote struct {
	mu        sync.Mutex
	sandboxID string
	summary   string
	exitCode  *int
	timedOut  bool
	oomKilled bool
	timing    sandbox.Timing
}

type auditKey struct{}

// note records details of the current call for the audit log.
func note(ctx context.Context, sandboxID, summary string, exitCode *int) {
	n, _ := ctx.Value(auditKey{}).(*auditNote)
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if sandboxID != "" {
		n.sandboxID = sandboxID
	}
	if summary != "" {
		n.summary = summary
	}
	if exitCode != nil {
		n.exitCode = exitCode
	}
}

// noteEnd records how a command the call ran ended: its exit code, and
// whether it was killed for its time or its memory.
func noteEnd(ctx context.Context, sandboxID string, res sandbox.ExecResult) {
	code := res.ExitCode
	note(ctx, sandboxID, "", &code)
	if n, _ := ctx.Value(auditKey{}).(*auditNote); n != nil {
		n.mu.Lock()
		n.timedOut, n.oomKilled, n.timing = res.TimedOut, res.OOMKilled, res.Timing
		n.mu.Unlock()
	}
}

// audit is middleware that appends one audit entry per tool call.
func (s *Server) audit(next server.ToolHandlerFunc) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		n := &auditNote{}
		start := time.Now()
		res, err := next(context.WithValue(ctx, auditKey{}, n), req)
		if s.st != nil {
			s.writeAudit(ctx, req, n, start, res, err)
		}
		if s.log.Enabled(ctx, slog.LevelDebug) {
			// Written beside the answer, not before it: the benchmark
			// that reads it would otherwise time its own log line
			// (a locked file and stderr, about 36 µs a call here).
			go s.logTiming(req.Params.Name, n, time.Since(start))
		}
		return res, err
	}
}

// logTiming logs, at debug level, where a call's time went in the server:
// all of its handling (took), the round trip to the sandbox within it, and
// the interpreter's own part of that. The benchmark's breakdown reads it
// (sandbox/bench); the client never sees it.
func (s *Server) logTiming(tool string, n *auditNote, took time.Duration) {
	n.mu.Lock()
	t := n.timing
	n.mu.Unlock()
	s.log.Debug("tool call timing", "tool", tool, "server_us", took.Microseconds(),
		"sandbox_us", t.Sandbox.Microseconds(), "interpreter_us", t.Interpreter.Microseconds(),
		"command_us", t.Command.Microseconds())
}

// writeAudit appends the audit entry of a call that started at start.
func (s *Server) writeAudit(ctx context.Context, req mcp.CallToolRequest, n *auditNote, start time.Time, res *mcp.CallToolResult, err error) {
	n.mu.Lock()
	e := state.AuditEntry{
		Time: start, Client: clientName(ctx), Tool: req.Params.Name,
		SandboxID: n.sandboxID, Summary: n.summary, ExitCode: n.exitCode,
		DurationMS: time.Since(start).Milliseconds(),
		Error:      err != nil || (res != nil && res.IsError),
		TimedOut:   n.timedOut, OOMKilled: n.oomKilled,
	}
	n.mu.Unlock()
	if res != nil && res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcp.TextContent); ok {
			e.ErrorText = tc.Text
		}
	}
	if err != nil {
		e.ErrorText = err.Error()
	}
	e.Cancelled = ctx.Err() != nil || errors.Is(err, context.Canceled)
	if e.ExitCode != nil && res != nil && !res.IsError && len(res.Content) > 0 {
		if tc, ok := res.Content[0].(mcp.TextContent); ok {
			e.Output = printable.Lines(tc.Text, 1000)
		}
	}
	if e.Summary == "" {
		e.Summary = e.ErrorText
	}
	// The tray's window shows these: a client's arguments and a
	// sandbox's output are cleaned where they enter the log.
	e.SandboxID = printable.Clean(e.SandboxID, printable.NameMax)
	e.Summary = printable.Lines(e.Summary, 300)
	e.ErrorText = printable.Lines(e.ErrorText, 1000)
	if werr := s.st.Audit(e); werr != nil {
		s.log.Warn("write audit log", "err", werr)
	}
}

// oneLine shortens s to its first line, at most n bytes, for summaries.
func oneLine(s string, n int) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " …"
	}
	if len(s) > n {
		s = s[:n] + "…"
	}
	return s
}
