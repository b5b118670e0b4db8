package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
)

type copyInArgs struct {
	sandboxRef
	HostPath       string `json:"host_path" jsonschema:"Absolute or ~/…"`
	DestPath       string `json:"dest_path,omitempty" default:"/workspace/(base name)"`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"Also .git and .gitignore'd files."`
}

func (s *Server) copyInTool() toolDef {
	return defineTool(spec{
		name:        "copy_in",
		description: "Copy a host file or directory (below the read roots) into a sandbox.",
		annotations: annotations("Copy in", false, false, true, false),
		output:      outputSchema[sandbox.CopyResult]("dest_path"),
	}, s.handleCopyIn)
}

func (s *Server) handleCopyIn(ctx context.Context, req mcp.CallToolRequest, a copyInArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, "copy_in host "+oneLine(a.HostPath, 200), nil)
	res, err := s.eng.CopyIn(ctx, a.SandboxID, sandbox.CopyInRequest{HostPath: a.HostPath, DestPath: a.DestPath, IncludeIgnored: a.IncludeIgnored})
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, "", fmt.Sprintf("copy_in host %s -> %s (%d files, %d bytes)", oneLine(a.HostPath, 200), res.DestPath, res.Files, res.Bytes), nil)
	text := fmt.Sprintf("Copied %d files (%d bytes) to %s.%s", res.Files, res.Bytes, res.DestPath, skippedText(res.Skipped))
	return mcp.NewToolResultStructured(res, text), nil
}

type copyOutArgs struct {
	sandboxRef
	Path      string `json:"path"`
	HostPath  string `json:"host_path,omitempty" jsonschema:"In the write root." default:"(sandbox_id)/(base name)"`
	Overwrite bool   `json:"overwrite,omitempty"`
}

func (s *Server) copyOutTool() toolDef {
	return defineTool(spec{
		name:        "copy_out",
		description: "Copy a sandbox file or directory to the host, below the write root.",
		annotations: annotations("Copy out", false, true, false, false),
		output:      outputSchema[sandbox.CopyResult]("host_path"),
	}, s.handleCopyOut)
}

func (s *Server) handleCopyOut(ctx context.Context, req mcp.CallToolRequest, a copyOutArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, fmt.Sprintf("copy_out %s -> host %s", oneLine(a.Path, 200), oneLine(a.HostPath, 200)), nil)
	res, err := s.eng.CopyOut(ctx, a.SandboxID, sandbox.CopyOutRequest{Path: a.Path, HostPath: a.HostPath, Overwrite: a.Overwrite})
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, "", fmt.Sprintf("copy_out %s -> host %s (%d files, %d bytes, %d links not made)", oneLine(a.Path, 200), res.HostPath, res.Files, res.Bytes, len(res.SkippedLinks)), nil)
	text := fmt.Sprintf("Copied %d files (%d bytes) to %s.%s", res.Files, res.Bytes, res.HostPath, skippedText(res.Skipped))
	return mcp.NewToolResultStructured(res, text), nil
}

func skippedText(skipped map[string]int) string {
	if len(skipped) == 0 {
		return ""
	}
	s := " Skipped:"
	for reason, n := range skipped {
		s += fmt.Sprintf(" %d %s;", n, reason)
	}
	return s[:len(s)-1] + "."
}

type installArgs struct {
	sandboxRef
	Packages []string `json:"packages" jsonschema:"e.g. numpy==1.26, lodash@4" min:"1" max:"50"`
	Manager  string   `json:"manager,omitempty" jsonschema:"auto: by the sandbox's language." enum:"pip,npm,auto" default:"auto"`
}

func (s *Server) installTool() toolDef {
	return defineTool(spec{
		name:        "install_packages",
		description: "Install packages into a sandbox via a networked helper that sees none of its files. Re-import: run_code reset.",
		annotations: annotations("Install packages", false, false, true, true),
		output:      outputSchema[install.Result]("installed"),
	}, s.handleInstall)
}

func (s *Server) handleInstall(ctx context.Context, req mcp.CallToolRequest, a installArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, fmt.Sprintf("install %v", a.Packages), nil)
	p := newProgress(ctx, req)
	start := time.Now()
	res, err := s.eng.InstallPackages(ctx, a.SandboxID, install.Request{Packages: a.Packages, Manager: a.Manager, Waiting: p.waiting()}, p.output)
	took := time.Since(start).Milliseconds()
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	note(ctx, "", "", &res.ExitCode)
	text := execText(sandbox.ExecResult{ExitCode: res.ExitCode, Stdout: res.Stdout, Stderr: res.Stderr, TimedOut: res.TimedOut, DurationMS: took}) + res.Note
	out := mcp.NewToolResultStructured(res, text)
	// A failed install changed nothing in the sandbox: an error, so that
	// a client does not go on as if the package were there.
	out.IsError = res.ExitCode != 0
	return out, nil
}
