package mcpserver

import (
	"context"
	"encoding/base64"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type runCodeArgs struct {
	Code           string `json:"code"`
	Language       string `json:"language,omitempty" jsonschema:"Default: the sandbox's, else python." enum:"{languages}"`
	SandboxID      string `json:"sandbox_id,omitempty" jsonschema:"Default: a fresh sandbox, removed after."`
	Image          string `json:"image,omitempty" jsonschema:"Fresh sandbox only. {image_note}." enum:"{images}"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" min:"1" max:"{max_timeout}" default:"{timeout}"`
	Reset          bool   `json:"reset,omitempty" jsonschema:"A new interpreter (or clean bash) first."`
}

func (s *Server) runCodeTool() toolDef {
	return defineTool(spec{
		name:        "run_code",
		description: "Run code. In a sandbox, state persists like a notebook (a trailing expression's value is result); a timeout restarts it (state_lost). matplotlib figures return as images.",
		annotations: annotations("Run code", false, true, false, false),
		vars:        schemaVars(s.eng.Config()),
		output:      outputSchema[sandbox.RunCodeResult]("exit_code", "sandbox_id", "state_lost"),
	}, s.handleRunCode)
}

func (s *Server) handleRunCode(ctx context.Context, req mcp.CallToolRequest, a runCodeArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, oneLine(a.Code, 200), nil)
	p := newProgress(ctx, req)
	res, err := s.eng.RunCode(ctx, sandbox.RunCodeRequest{
		Code: a.Code, Language: a.Language, SandboxID: a.SandboxID, Image: a.Image, TimeoutSeconds: a.TimeoutSeconds,
		Reset: a.Reset, Client: clientName(ctx), Progress: pullProgress(p), Waiting: p.waiting(),
		Output: p.output,
	})
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
