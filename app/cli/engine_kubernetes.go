package cli

import (
	"context"
	"log/slog"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/kubeconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// kubernetesConfig is the Kubernetes backend's configuration from the
// file's [kubernetes] table (kubeconn.Config: the tray's and the window's
// too).
func kubernetesConfig(c *config.Config) kubernetes.Config {
	return kubeconn.Config(c)
}

// kubernetesBackend is kb as the engine's backend.
func kubernetesBackend(kb *kubernetes.Backend) (backend.Backend, error) {
	return kb, nil
}

// selectKubernetes connects to the cluster cfg's [kubernetes] table names
// and returns its backend. A context that does not exist or does not
// answer is an error naming it: never Docker in its place.
func selectKubernetes(ctx context.Context, cfg *config.Config, log *slog.Logger) (*kubernetes.Backend, backend.Backend, error) {
	kb, err := kubeconn.Open(ctx, cfg, log)
	if err != nil {
		return nil, nil, err
	}
	be, err := kubernetesBackend(kb)
	if err != nil {
		return nil, nil, err
	}
	return kb, be, nil
}

// selectKubernetesTable is selectKubernetes for a [kubernetes] table
// alone (backend-serve: the tray's or the window's table).
func selectKubernetesTable(ctx context.Context, k config.Kubernetes, log *slog.Logger) (*kubernetes.Backend, error) {
	kb, _, err := selectKubernetes(ctx, &config.Config{Backend: config.Backend{Kind: config.BackendKubernetes}, Kubernetes: k}, log)
	return kb, err
}

// newKubernetesSetup is the set-up of every command when backend.kind is
// "kubernetes": the server's too, which fails to start rather than serve
// on another engine.
func newKubernetesSetup(ctx context.Context, w *config.Watcher, st *state.Store, log *slog.Logger) (*setup, error) {
	kb, be, err := selectKubernetes(ctx, w.Current(), log)
	if err != nil {
		return nil, err
	}
	return &setup{cfg: w, backend: be, state: st, kube: kb, host: "kubernetes: cluster " + kb.Cluster() + ", namespace " + kb.Namespace()}, nil
}

// backendKind is the set-up's backend.kind for the watchdog: "" for Docker.
func (s *setup) backendKind() string {
	if s.kube != nil {
		return config.BackendKubernetes
	}
	return ""
}
