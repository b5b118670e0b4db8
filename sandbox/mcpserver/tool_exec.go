package mcpserver

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type execArgs struct {
	SandboxID      string            `json:"sandbox_id"`
	Command        string            `json:"command"`
	TimeoutSeconds int               `json:"timeout_seconds"`
	Workdir        string            `json:"workdir"`
	Env            map[string]string `json:"env"`
	Stdin          string            `json:"stdin"`
}

func (s *Server) execTool() toolDef {
	tool := mcp.NewTool("sandbox_exec",
		mcp.WithDescription("Run a shell command (sh -c) in a sandbox. A non-zero exit, a timeout or an out-of-memory kill is reported in the result's fields. Output is capped (head and tail kept)."),
		annotations("Run command in sandbox", false, true, false, false),
		mcp.WithString("sandbox_id", mcp.Required(), mcp.Description("The sandbox, from sandbox_create.")),
		mcp.WithString("command", mcp.Required(), mcp.Description("Shell command, run by sh -c in /workspace.")),
		mcp.WithInteger("timeout_seconds", mcp.Min(1), mcp.Description("Kill the command (and everything it started) after this many seconds.")),
		mcp.WithString("workdir", mcp.Description("Working directory, relative to /workspace (default /workspace).")),
		mcp.WithObject("env", mcp.AdditionalProperties(map[string]any{"type": "string"}), mcp.Description("Extra environment variables.")),
		mcp.WithString("stdin", mcp.Description("Text fed to the command's standard input.")),
		mcp.WithOutputSchema[sandbox.ExecResult](),
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
	noteEnd(ctx, "", res)
	return mcp.NewToolResultStructured(res, execText(res)), nil
}
