package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type execArgs struct {
	sandboxRef
	Command        string            `json:"command" jsonschema:"Shell command, run by sh -c in /workspace."`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"Kill the command (and everything it started) after this many seconds." min:"1"`
	Workdir        string            `json:"workdir,omitempty" jsonschema:"Working directory, relative to /workspace (default /workspace)."`
	Env            map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables."`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"Text fed to the command's standard input."`
	Background     bool              `json:"background,omitempty" jsonschema:"Start it and return at once with pid and log_path (for servers); it runs until it exits or the sandbox ends."`
}

// execOutput is sandbox_exec's result: a background start fills in only
// PID and LogPath.
type execOutput struct {
	sandbox.ExecResult
	PID     int    `json:"pid,omitempty"`
	LogPath string `json:"log_path,omitempty"`
}

func (s *Server) execTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_exec",
		description: "Run a shell command (sh -c) in a sandbox. A non-zero exit, a timeout or an out-of-memory kill is reported in the result's fields. Output is capped (head and tail kept).",
		annotations: annotations("Run command in sandbox", false, true, false, false),
		output:      outputSchema[execOutput](),
	}, s.handleExec)
}

func (s *Server) handleExec(ctx context.Context, req mcp.CallToolRequest, a execArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "$ "+oneLine(a.Command, 200), nil)
	if a.Background {
		return s.startBackground(ctx, a)
	}
	p := newProgress(ctx, req)
	res, err := s.eng.Exec(ctx, a.SandboxID, sandbox.ExecRequest{
		Command: a.Command, TimeoutSeconds: a.TimeoutSeconds, Workdir: a.Workdir, Env: a.Env, Stdin: a.Stdin,
	}, p.output)
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	noteEnd(ctx, "", res)
	return mcp.NewToolResultStructured(execOutput{ExecResult: res}, execText(res)), nil
}

func (s *Server) startBackground(ctx context.Context, a execArgs) (*mcp.CallToolResult, error) {
	p, err := s.eng.StartBackground(ctx, a.SandboxID, sandbox.ExecRequest{
		Command: a.Command, Workdir: a.Workdir, Env: a.Env, Stdin: a.Stdin,
	})
	if err != nil {
		return errorResult(err), nil
	}
	text := fmt.Sprintf("Started pid %d in the background; its output goes to %s (read_file). sandbox_list says if it runs; `kill %d` stops it.", p.PID, p.LogPath, p.PID)
	return mcp.NewToolResultStructured(execOutput{PID: p.PID, LogPath: p.LogPath}, text), nil
}
