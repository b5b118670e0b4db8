package mcpserver

import (
	"context"

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
}

func (s *Server) execTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_exec",
		description: "Run a shell command (sh -c) in a sandbox. Output is capped (head and tail).",
		annotations: annotations("Run command", false, true, false, false),
		vars:        schemaVars(s.eng.Config()),
		output:      outputSchema[sandbox.ExecResult]("exit_code", "timed_out", "oom_killed"),
	}, s.handleExec)
}

func (s *Server) handleExec(ctx context.Context, req mcp.CallToolRequest, a execArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "$ "+oneLine(a.Command, 200), nil)
	p := newProgress(ctx, req)
	res, err := s.eng.Exec(ctx, a.SandboxID, sandbox.ExecRequest{
		Command: a.Command, TimeoutSeconds: a.TimeoutSeconds, Workdir: a.Workdir, Env: a.Env, Stdin: a.Stdin,
	}, p.output)
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	noteEnd(ctx, "", res)
	return mcp.NewToolResultStructured(res, execText(res)), nil
}
