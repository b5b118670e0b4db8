package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type runCodeArgs struct {
	Code           string `json:"code" jsonschema:"The program text."`
	Language       string `json:"language,omitempty" jsonschema:"Language (default python, or the sandbox's). Available: {languages}."`
	SandboxID      string `json:"sandbox_id,omitempty" jsonschema:"Run in this sandbox (from sandbox_create) instead of a fresh one."`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"Kill the run after this many seconds." min:"1"`
	Reset          bool   `json:"reset,omitempty" jsonschema:"Start afresh first: a new interpreter (forget earlier variables), or for bash a clean shell state."`
}

func (s *Server) runCodeTool() toolDef {
	cfg := s.eng.Config()
	return defineTool(spec{
		name:        "run_code",
		description: "Run code and return its output. Without sandbox_id a fresh sandbox is used and removed afterwards. With sandbox_id, code runs in that sandbox and keeps its state between calls like a notebook: Python and JavaScript keep their variables and return the value of a trailing expression as result; bash keeps its working directory, variables and functions. A timeout restarts the interpreter and reports state_lost. Figures (matplotlib) come back as images, at most 16 and limits.image_bytes in all; more are dropped and the result says truncated.",
		annotations: annotations("Run code", false, true, false, false),
		vars:        map[string]string{"languages": fmt.Sprint(cfg.LanguageNames())},
		output:      outputSchema[sandbox.RunResult](),
	}, s.handleRunCode)
}

func (s *Server) handleRunCode(ctx context.Context, req mcp.CallToolRequest, a runCodeArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, oneLine(a.Code, 200), nil)
	p := newProgress(ctx, req)
	res, err := s.eng.RunCode(ctx, sandbox.RunRequest{
		Code: a.Code, Language: a.Language, SandboxID: a.SandboxID, TimeoutSeconds: a.TimeoutSeconds,
		Reset: a.Reset, Client: clientName(ctx), Progress: pullProgress(p),
	}, p.output)
	p.flush()
	// The figures' bytes go back to the server's budget once they are
	// encoded here (the encoded copy is what is sent).
	defer res.Release()
	if err != nil {
		return errorResult(err), nil
	}
	noteEnd(ctx, res.SandboxID, res.ExecResult)
	text := execText(res.ExecResult)
	if res.Result != "" {
		text += "--- result\n" + res.Result + "\n"
	}
	if res.StateLost {
		text += "--- note: the interpreter was restarted; earlier variables are gone\n"
	}
	if len(res.Figures) > 0 {
		text += fmt.Sprintf("--- %d figure(s) attached\n", len(res.Figures))
	}
	fields := res
	fields.ExecResult, fields.Result = withoutOutput(res.ExecResult), ""
	out := mcp.NewToolResultStructured(fields, text)
	for _, f := range res.Figures {
		out.Content = append(out.Content, mcp.NewImageContent(base64.StdEncoding.EncodeToString(f.Data), f.MIME))
	}
	return out, nil
}
