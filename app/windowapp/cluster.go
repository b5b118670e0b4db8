//go:build cgo

package windowapp

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// engineLooking shows that a look for the engine started: on Kubernetes,
// the cluster the config names, connecting. On the engine loop's
// goroutine.
func (a *App) engineLooking() {
	cfg := a.cfg.Current()
	a.update(func(s *uiState) {
		s.detecting = true
		if engineconn.OnCluster(cfg) {
			s.docker, s.cluster = nil, clusterInfo(cfg, &engineconn.Cluster{Context: cfg.Kubernetes.Context, Namespace: cfg.Kubernetes.Namespace})
		}
	})
}

// clusterLooked shows what a look for the Kubernetes cluster found: its
// place, and why it does not answer. Docker's state is cleared: nothing
// on the window speaks of it on a cluster. On the engine loop's
// goroutine.
func (a *App) clusterLooked(ctx context.Context, l engineconn.Look) {
	err := l.Err
	c := clusterInfo(a.cfg.Current(), l.Cluster)
	c.Answered = err == nil
	if err != nil {
		c.Err = err.Error()
	}
	a.update(func(s *uiState) {
		s.detecting, s.docker, s.dockerOK, s.cfgHost, s.runtime, s.lost = false, nil, err == nil, l.Key, "", ""
		s.cluster, s.health = c, nil
		if err != nil {
			s.snap = sandboxwatch.Snapshot{Err: err}
		}
	})
	if err != nil {
		a.do(func() { a.win.Sandboxes.Set(sandboxwatch.Snapshot{Err: err}) })
		a.log.Warn("kubernetes", "place", l.Cluster.Place(), "err", err)
	} else {
		a.log.Info("kubernetes", "ok", true, "place", l.Cluster.Place())
	}
	if a.serverErr == nil {
		a.fetchServerVersion(ctx)
	}
}

// clusterInfo is the Status tab's view of cl under cfg.
func clusterInfo(cfg *config.Config, cl *engineconn.Cluster) *ui.ClusterInfo {
	return &ui.ClusterInfo{Place: cl.Place(), Context: cfg.Kubernetes.Context, RuntimeClass: cfg.Kubernetes.RuntimeClass}
}
