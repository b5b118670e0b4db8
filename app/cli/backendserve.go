package cli

import (
	"context"
	"log/slog"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/backendrpc"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// runBackendServe is the hidden `mcp-sandbox backend-serve`: the tray and
// the window start it to read a Kubernetes cluster without linking its
// client (backendrpc). It serves on stdin and stdout until stdin ends,
// which it does when its parent lets go or exits; it logs warnings to
// stderr, which the parent logs.
func runBackendServe(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, backendrpc.Command, "")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	open := func(ctx context.Context, k config.Kubernetes) (backend.Backend, backendrpc.Place, error) {
		kb, err := selectKubernetesTable(ctx, k, log)
		if err != nil {
			return nil, backendrpc.Place{}, err
		}
		return kb, backendrpc.Place{Cluster: kb.Cluster(), Namespace: kb.Namespace()}, nil
	}
	if err := backendrpc.Serve(ctx, e.Stdin, e.Stdout, open, log); err != nil {
		log.Error(backendrpc.Command, "err", err)
		return 1
	}
	return 0
}
