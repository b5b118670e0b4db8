//go:build cgo

package windowapp

import (
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// uiState is what the background work last learned; the tray menu and the
// Status tab are drawn from it. Guarded by App.mu.
type uiState struct {
	detecting bool
	docker    *dockerhost.Result
	dockerOK  bool
	cfgHost   string          // engineconn.EngineKey of the config at the last look
	cluster   *ui.ClusterInfo // the Kubernetes cluster; nil on Docker
	runtime   string
	version   string
	snap      sandboxwatch.Snapshot
	paused    bool
	clients   []ui.ClientRow
	http      ui.HTTPInfo
	offer     string
	lost      string // why the engine followed stopped answering
	health    *health.Engine
}

// update changes the shared state and redraws the Status tab on the UI
// goroutine.
func (a *App) update(f func(s *uiState)) {
	a.mu.Lock()
	f(&a.ui)
	a.mu.Unlock()
	a.do(a.pushStatus)
	a.idle.Touch()
}

// pushStatus shows the shared state on the Status tab. UI goroutine only.
func (a *App) pushStatus() {
	a.mu.Lock()
	info := ui.StatusInfo{
		Detecting: a.ui.detecting, Docker: a.ui.docker,
		Runtime: a.ui.runtime, Server: a.server, ServerVersion: a.ui.version,
		HTTP: a.ui.http, Paused: a.ui.paused, Sandboxes: a.ui.snap.Count().Sandboxes, Warm: a.ui.snap.Count().Warm,
		Lost: a.ui.lost, Offer: a.ui.offer, Health: a.ui.health,
	}
	place := ""
	if c := a.ui.cluster; c != nil {
		cc := *c
		info.Cluster, place = &cc, c.Place
	}
	a.mu.Unlock()
	a.win.Sandboxes.SetPlace(place)
	if a.serverErr != nil {
		info.ServerErr = a.serverErr.Error()
	}
	a.win.Status.Set(info)
	// The headline goes to the log when it changes: what the window told
	// the person, and when, can be read back.
	if h := a.win.Status.Headline(); h != a.headline {
		a.headline = h
		a.log.Info("status", "headline", h)
	}
}
