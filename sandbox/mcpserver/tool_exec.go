package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type execArgs struct {
	SandboxID      string            `json:"sandbox_id" jsonschema:"The sandbox, from sandbox_create."`
	Command        string            `json:"command" jsonschema:"Shell command, run by sh -c in /workspace."`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" jsonschema:"Kill the command (and everything it started) after this many seconds." min:"1"`
	Workdir        string            `json:"workdir,omitempty" jsonschema:"Working directory, relative to /workspace (default /workspace)."`
	Env            map[string]string `json:"env,omitempty" jsonschema:"Extra environment variables."`
	Stdin          string            `json:"stdin,omitempty" jsonschema:"Text fed to the command's standard input."`
}

func (s *Server) execTool() toolDef {
	tool := mcp.NewTool("sandbox_exec",
		mcp.WithDescription("Run a shell command (sh -c) in a sandbox. A non-zero exit, a timeout or an out-of-memory kill is reported in the result's fields. Output is capped (head and tail kept)."),
		annotations("Run command in sandbox", false, true, false, false),
		inputSchema[execArgs](nil),
		outputSchema[sandbox.ExecResult](),
	)
	return toolDef{tool, s.handleExec}
}

func (s *Server) handleExec(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var a execArgs
	if err := req.BindArguments(&a); err != nil {
		return invalidArgs(err), nil
	}
	note(ctx, a.SandboxID, "$ "+oneLine(a.Command, 200), nil)
	p := newProgress(ctx, req)
	res, err := s.eng.Exec(ctx, a.SandboxID, sandbox.ExecRequest{
		Command: a.Command, TimeoutSeconds: a.TimeoutSeconds, Workdir: a.Workdir, Env: a.Env, Stdin: a.Stdin,
	}, p.output)
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, "", "", &res.ExitCode)
	return mcp.NewToolResultStructured(res, execText(res)), nil
}
