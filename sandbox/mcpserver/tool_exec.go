package mcpserver

import (
	"context"

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
}

func (s *Server) execTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_exec",
		description: "Run a shell command (sh -c) in a sandbox. A non-zero exit, a timeout or an out-of-memory kill is reported in the result's fields. Output is capped (head and tail kept).",
		annotations: annotations("Run command in sandbox", false, true, false, false),
		output:      outputSchema[sandbox.ExecResult](),
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
	return mcp.NewToolResultStructured(withoutOutput(res), execText(res)), nil
}
