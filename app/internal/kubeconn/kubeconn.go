package kubeconn

import (
	"context"
	"log/slog"
	"maps"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
)

// Config is the Kubernetes backend's configuration from c's [kubernetes]
// table.
func Config(c *config.Config) kubernetes.Config {
	k := c.Kubernetes
	return kubernetes.Config{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace,
		RuntimeClass: k.RuntimeClass, UseAgentSandbox: k.UseAgentSandbox,
		WarmPool: maps.Clone(k.WarmPool), Lease: time.Duration(k.LeaseSeconds) * time.Second,
		// A pool grows under demand within the bounds of the Docker
		// pool's ([pool] max_size, idle_seconds; limits.max_sandboxes).
		WarmPoolMax:  min(c.Pool.MaxSize, c.Limits.MaxSandboxes),
		WarmPoolIdle: time.Duration(c.Pool.IdleSeconds) * time.Second,
		CPURequest:   k.CPURequest,
	}
}

// Open connects to the cluster c's [kubernetes] table names and returns
// its backend. A context that does not exist or does not answer is an
// error naming it.
func Open(ctx context.Context, c *config.Config, log *slog.Logger) (*kubernetes.Backend, error) {
	return kubernetes.New(ctx, Config(c), log)
}
