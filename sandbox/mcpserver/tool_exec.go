package mcpserver

import (
	"context"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type execArgs struct {
	sandboxRef
	Command        string            `json:"command"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" min:"1" max:"{max_timeout}" default:"{timeout}"`
	Workdir        string            `json:"workdir,omitempty" default:"/workspace"`
	Env            map[string]string `json:"env,omitempty"`
	Stdin          string            `json:"stdin,omitempty"`
	Background     bool              `json:"background,omitempty" jsonschema:"Return at once with pid and log_path; runs until it exits or the sandbox ends (servers)."`
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
		description: "Run a shell command (sh -c) in a sandbox. Output is capped (head and tail).",
		annotations: annotations("Run command", false, true, false, false),
		vars:        schemaVars(s.eng.Config()),
		output:      outputSchema[execOutput]("exit_code", "timed_out", "output_file"),
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
		Output: p.output,
	})
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	noteEnd(ctx, "", res)
	return mcp.NewToolResultStructured(execOutput{ExecResult: withoutOutput(res)}, execText(res)), nil
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
