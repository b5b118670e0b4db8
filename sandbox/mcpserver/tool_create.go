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
)

type createArgs struct {
	Language     string            `json:"language,omitempty" jsonschema:"Language the sandbox is set up for (default python). Available: {languages}."`
	Image        string            `json:"image,omitempty" jsonschema:"Container image to use instead of the language's image; must be allowed by the policy."`
	Network      string            `json:"network,omitempty" jsonschema:"Network mode (default {network}): none (no network at all), allowlist (only the hosts in allow_domains, through a proxy the server checks; the sandbox still has no network interface) or egress (the whole network, only when the policy allows it)." enum:"none,allowlist,egress"`
	AllowDomains []string          `json:"allow_domains,omitempty" jsonschema:"For network allowlist: hosts the sandbox may reach, e.g. pypi.org, *.pythonhosted.org (subdomains only) or api.example.com:8443 (without a port: 80 and 443). Entries beyond network.allow_domains are asked of the person (elicitation or the tray) where one can be asked, else refused. Empty: all of network.allow_domains. Programs reach them through the proxy HTTP_PROXY and HTTPS_PROXY name (http://127.0.0.1:3128)." max:"256"`
	MemoryMB     int               `json:"memory_mb,omitempty" jsonschema:"Memory limit in MB (policy maximum, and default: {memory_mb})." min:"16" max:"1048576"`
	CPUs         float64           `json:"cpus,omitempty" jsonschema:"CPU limit in cores (policy maximum, and default: {cpus})." min:"0.01" max:"1024"`
	Pids         int               `json:"pids,omitempty" jsonschema:"Process limit (policy maximum, and default: {pids})." min:"8" max:"65536"`
	TTLMinutes   int               `json:"ttl_minutes,omitempty" jsonschema:"Idle minutes before the sandbox is removed (default {ttl_minutes})." min:"1" max:"1440"`
	Env          map[string]string `json:"env,omitempty" jsonschema:"Environment variables for every command in the sandbox."`
}

type createOutput struct {
	SandboxID string         `json:"sandbox_id"`
	Language  string         `json:"language"`
	Image     string         `json:"image"`
	Network   string         `json:"network"`
	Limits    sandbox.Limits `json:"limits"`
	ExpiresAt string         `json:"expires_at"`
}

func (s *Server) createTool() toolDef {
	cfg := s.eng.Config()
	return defineTool(spec{
		name:        "sandbox_create",
		description: "Create a sandbox: a disposable, hardened container (no network unless allowed, non-root, read-only root, memory/CPU/pids limits) that keeps files in /workspace and state between calls until it is stopped or idles out. Returns its sandbox_id for sandbox_exec, run_code and the file tools.",
		annotations: annotations("Create sandbox", false, false, false, false),
		vars: map[string]string{
			"languages": fmt.Sprint(cfg.LanguageNames()), "memory_mb": fmt.Sprint(cfg.Limits.MemoryMB),
			"cpus": fmt.Sprint(cfg.Limits.CPUs), "pids": fmt.Sprint(cfg.Limits.Pids), "ttl_minutes": fmt.Sprint(cfg.Limits.IdleTTLMinutes),
			"network": cfg.Network.Default,
		},
		output: outputSchema[createOutput](),
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
	s.ask.created(sb.ID, server.ClientSessionFromContext(ctx))
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
func pullProgress(p *progress) func(sandbox.PullProgress) {
	if p == nil {
		return nil
	}
	return func(pp sandbox.PullProgress) {
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
