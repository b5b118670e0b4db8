package mcpserver

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

type createArgs struct {
	Language     string            `json:"language,omitempty" enum:"{languages}" default:"python"`
	Image        string            `json:"image,omitempty" jsonschema:"{image_note}." enum:"{images}"`
	Network      string            `json:"network,omitempty" enum:"{networks}" default:"{network}"`
	AllowDomains []string          `json:"allow_domains,omitempty" jsonschema:"allowlist: host, *.domain, with :port (else 80, 443), via HTTP(S)_PROXY. Default: the configured; others {ask}." max:"256"`
	MemoryMB     int               `json:"memory_mb,omitempty" min:"16" max:"{memory_mb}" default:"{memory_mb}"`
	CPUs         float64           `json:"cpus,omitempty" min:"0.01" max:"{cpus}" default:"{cpus}"`
	Pids         int               `json:"pids,omitempty" min:"8" max:"{pids}" default:"{pids}"`
	TTLMinutes   int               `json:"ttl_minutes,omitempty" jsonschema:"Idle minutes before removal." min:"1" max:"1440" default:"{ttl_minutes}"`
	Env          map[string]string `json:"env,omitempty" jsonschema:"For every command."`
}

type createOutput struct {
	SandboxID string           `json:"sandbox_id"`
	Language  string           `json:"language"`
	Image     string           `json:"image"`
	Network   string           `json:"network"`
	Limits    inventory.Limits `json:"limits"`
	ExpiresAt string           `json:"expires_at"`
}

func (s *Server) createTool() toolDef {
	return defineTool(spec{
		name:        "sandbox_create",
		description: "A hardened container keeping /workspace and state until sandbox_stop or idle expiry.",
		annotations: annotations("Create sandbox", false, false, false, false),
		vars:        schemaVars(s.eng.Config()),
		output:      outputSchema[createOutput]("sandbox_id"),
	}, s.handleCreate)
}

func (s *Server) handleCreate(ctx context.Context, req mcp.CallToolRequest, a createArgs) (*mcp.CallToolResult, error) {
	p := newProgress(ctx, req)
	sb, err := s.eng.Create(ctx, sandbox.CreateRequest{
		Language: a.Language, Image: a.Image, Network: a.Network, AllowDomains: a.AllowDomains,
		MemoryMB: a.MemoryMB, CPUs: a.CPUs, Pids: a.Pids, TTLMinutes: a.TTLMinutes, Env: a.Env,
		Client: clientName(ctx), Progress: pullProgress(p),
	})
	p.flush()
	if err != nil {
		return errorResult(err), nil
	}
	if !overHTTP(ctx) { // an HTTP session ends with its request
		s.ask.created(sb.ID, server.ClientSessionFromContext(ctx))
	}
	out := createOutput{
		SandboxID: sb.ID, Language: sb.Language, Image: sb.Image, Network: sb.Network,
		Limits: sb.Limits, ExpiresAt: sb.ExpiresAt().UTC().Format(time.RFC3339),
	}
	note(ctx, sb.ID, fmt.Sprintf("created %s sandbox (%s)%s", sb.Language, sb.Image, envNames(a.Env)), nil)
	text := fmt.Sprintf("Created sandbox %s (%s, image %s, network %s, %d MB, %g CPUs). Files live in /workspace. It expires after %d idle minutes.",
		sb.ID, sb.Language, sb.Image, sb.Network, sb.Limits.MemoryMB, sb.Limits.CPUs, int(time.Until(sb.ExpiresAt()).Round(time.Minute).Minutes()))
	return mcp.NewToolResultStructured(out, text), nil
}

// pullProgress turns image pull progress into progress notifications.
func pullProgress(p *progress) func(backend.PullProgress) {
	if p == nil {
		return nil
	}
	return func(pp backend.PullProgress) {
		msg := "pulling image: " + pp.Status
		if pp.Total > 0 {
			msg = fmt.Sprintf("pulling image: %.1f of %.1f MB (%s)", float64(pp.Current)/1e6, float64(pp.Total)/1e6, pp.Status)
		}
		p.setStatus(msg)
	}
}

// envNames lists the names of sandbox_create's environment for the audit
// log, values redacted (they may be tokens).
func envNames(env map[string]string) string {
	if len(env) == 0 {
		return ""
	}
	names := make([]string, 0, len(env))
	for k := range env {
		names = append(names, oneLine(k, 64)+"=…")
	}
	sort.Strings(names)
	return " env " + strings.Join(names, " ")
}
