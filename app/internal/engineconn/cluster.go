package engineconn

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/backendrpc"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// Cluster is the Kubernetes cluster a look was made for (backend.kind =
// "kubernetes"): what the config names, and what the cluster answered.
type Cluster struct {
	// Context is the config's kubernetes.context; "" is the kubeconfig's
	// current one (or in-cluster).
	Context string
	// Name is the cluster's name as the backend reports it; "" when it
	// did not answer.
	Name string
	// Namespace holds the sandboxes: the backend's, else the config's.
	Namespace string
}

// Place is where the sandboxes run, as the tray and the window show it
// in place of Docker's engine: "cluster NAME · namespace NS".
func (c *Cluster) Place() string {
	name := c.Name
	if name == "" {
		name = c.Context
	}
	if name == "" {
		name = "(current context)"
	}
	ns := c.Namespace
	if ns == "" {
		ns = "default"
	}
	return "cluster " + name + " · namespace " + ns
}

// OpenCluster connects to the cluster cfg names and returns its backend
// and where it is; nil in Options is the server binary's (openViaServer).
type OpenCluster func(ctx context.Context, cfg *config.Config, log *slog.Logger) (backend.Backend, *Cluster, error)

// OnCluster reports whether cfg's backend.kind is "kubernetes".
func OnCluster(cfg *config.Config) bool {
	return cfg.Backend.Kind == config.BackendKubernetes
}

// ErrNoServer: the server binary that reads a cluster was not found.
var ErrNoServer = errors.New("the Kubernetes cluster is read through the mcp-sandbox binary, which was not found")

// openViaServer is OpenCluster through the server binary (Options.Server),
// one long-lived child (`mcp-sandbox backend-serve`) kept across looks and
// started again when it has ended: the tray and the window do not link
// the Kubernetes client. A context that does not answer is an error
// naming it, in the server's words. On the loop's goroutine.
func (l *Loop) openViaServer(ctx context.Context, cfg *config.Config, log *slog.Logger) (backend.Backend, *Cluster, error) {
	c := &Cluster{Context: cfg.Kubernetes.Context, Namespace: cfg.Kubernetes.Namespace}
	if l.o.Server == "" {
		return nil, c, fmt.Errorf("%w (%v): reinstall MCP Sandbox, or put mcp-sandbox on PATH", ErrNoServer, l.o.ServerErr)
	}
	if l.child != nil && !l.child.Alive() {
		l.closeChild()
	}
	if l.child == nil {
		ch, err := backendrpc.Start(l.o.Server, log)
		if err != nil {
			return nil, c, err
		}
		l.child = ch
	}
	place, err := l.child.Open(ctx, cfg.Kubernetes)
	if err != nil {
		return nil, c, err
	}
	c.Name, c.Namespace = place.Cluster, place.Namespace
	return l.child, c, nil
}

// closeChild ends the child that reads the cluster, if any: the config
// no longer names one, or the loop ends. On the loop's goroutine.
func (l *Loop) closeChild() {
	if l.child != nil {
		l.child.Close()
		l.child = nil
	}
}

// clusterPoll is how often a cluster's sandboxes are listed: a cluster
// has no events stream the backend contract offers.
const clusterPoll = 5 * time.Second

// lookCluster connects to the cluster cfg names and prepares to follow
// its sandboxes by polling (sandboxwatch.PollSource). Docker is not
// looked for: the look's Result stays empty, its Cluster says where.
func (l *Loop) lookCluster(ctx context.Context, cfg *config.Config) Look {
	open := l.o.OpenCluster
	if open == nil {
		open = l.openViaServer
	}
	cctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	be, cl, err := open(cctx, cfg, l.o.Log)
	look := Look{Err: err, Result: &dockerhost.Result{}, ConfigHost: cfg.Docker.Host, Key: EngineKey(cfg), Cluster: cl}
	if err != nil {
		return look
	}
	interval := l.o.PollInterval
	if interval <= 0 {
		interval = clusterPoll
	}
	var src sandboxwatch.Source = sandboxwatch.PollSource{Lister: inventory.Lister{Backend: be, State: l.o.Store, Pool: true}, Interval: interval}
	if ch, ok := be.(*backendrpc.Client); ok {
		src = childSource{PollSource: src.(sandboxwatch.PollSource), child: ch}
	}
	look.Conn = &Conn{Backend: be, Cluster: cl}
	look.Conn.Model = sandboxwatch.New(sandboxwatch.Options{Source: src, OnChange: l.o.OnChange, Log: l.o.Log})
	return look
}

// EngineKey names what a look for the engine depends on in cfg: the
// backend's kind, and docker.host or the [kubernetes] table's context
// and namespace. When it changes, the engine followed may no longer be
// the one the config picks: look again (Loop.Redetect).
func EngineKey(cfg *config.Config) string {
	if OnCluster(cfg) {
		k := cfg.Kubernetes
		return "kubernetes\x00" + k.Kubeconfig + "\x00" + k.Context + "\x00" + k.Namespace
	}
	return "docker\x00" + cfg.Docker.Host
}

// childSource is a cluster's PollSource whose stream ends when the child
// reading the cluster has ended (it crashed, or was killed): the loop
// then looks again, which starts another, instead of polling a child
// that is gone.
type childSource struct {
	sandboxwatch.PollSource
	child *backendrpc.Client
}

// Events ticks as PollSource's, and fails once the child has ended.
func (s childSource) Events(ctx context.Context) (<-chan sandboxwatch.Event, <-chan error) {
	ev, _ := s.PollSource.Events(ctx)
	errc := make(chan error, 1)
	go func() { // ends with ctx or the child
		select {
		case <-ctx.Done():
		case <-s.child.Done():
			errc <- s.child.Err()
		}
	}()
	return ev, errc
}
