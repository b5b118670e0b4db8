package mcpserver

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

type copyInArgs struct {
	sandboxRef
	HostPath       string `json:"host_path" jsonschema:"Absolute host path (or one starting with ~) of a file or directory."`
	DestPath       string `json:"dest_path,omitempty" jsonschema:"Where the copy is placed in the sandbox (default /workspace/<base name>)."`
	IncludeIgnored bool   `json:"include_ignored,omitempty" jsonschema:"Also copy .git and files matched by .gitignore."`
}

func (s *Server) copyInTool() toolDef {
	cfg := s.eng.Config()
	return defineTool(spec{
		name:        "copy_in",
		description: fmt.Sprintf("Copy a file or a whole directory from the user's computer into a sandbox. Only paths below the allowed read roots (%v) can be read. Symlinks are copied as links; .git and .gitignore'd files are skipped unless include_ignored is set.", cfg.Files.ReadRoots),
		annotations: annotations("Copy host files into sandbox", false, false, true, false),
		output:      outputSchema[sandbox.CopyResult](),
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
	Path      string `json:"path" jsonschema:"File or directory in the sandbox, relative to /workspace."`
	HostPath  string `json:"host_path,omitempty" jsonschema:"Destination relative to the write root, or absolute inside it."`
	Overwrite bool   `json:"overwrite,omitempty" jsonschema:"Replace an existing destination."`
}

func (s *Server) copyOutTool() toolDef {
	cfg := s.eng.Config()
	return defineTool(spec{
		name:        "copy_out",
		description: fmt.Sprintf("Copy a file or directory out of a sandbox to the user's computer, below %s (default <that>/<sandbox_id>/<base name>). Never overwrites unless overwrite is set; links pointing outside the copy, devices and executable bits are not copied.", cfg.Files.WriteRoot),
		annotations: annotations("Copy sandbox files to host", false, true, false, false),
		output:      outputSchema[sandbox.CopyResult](),
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
	Packages []string `json:"packages" jsonschema:"Package names, optionally with versions (numpy==1.26, lodash@4)." min:"1"`
	Manager  string   `json:"manager,omitempty" jsonschema:"pip, npm, or auto (from the sandbox's language; default)." enum:"pip,npm,auto"`
}

func (s *Server) installTool() toolDef {
	return defineTool(spec{
		name:        "install_packages",
		description: "Install Python (pip) or JavaScript (npm) packages for a sandbox. A short-lived helper container with network access (and none of the sandbox's files) installs them, together with every package installed in this sandbox before, and they are copied into the sandbox's /workspace; the sandbox itself never gets a network. Installed packages are importable by later run_code calls (after reset: true for a package already imported).",
		annotations: annotations("Install packages", false, false, true, true),
		output:      outputSchema[sandbox.InstallResult](),
	}, s.handleInstall)
}

func (s *Server) handleInstall(ctx context.Context, req mcp.CallToolRequest, a installArgs) (*mcp.CallToolResult, error) {
	note(ctx, a.SandboxID, fmt.Sprintf("install %v", a.Packages), nil)
	p := newProgress(ctx, req)
	start := time.Now()
	res, err := s.eng.InstallPackages(ctx, a.SandboxID, sandbox.InstallRequest{Packages: a.Packages, Manager: a.Manager}, p.output)
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
