package trayapp

import (
	"context"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/firstrun"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/clientsetup"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// newEngineLoop makes the loop that follows the engine: it keeps the
// menu's state, runs the first-run set-up once an endpoint is known, and
// notifies when Docker is lost or found again. The model relists on
// lifecycle events only and never samples usage, which only the window
// shows: no polling.
func (a *App) newEngineLoop() *engineconn.Loop {
	return engineconn.New(engineconn.Options{
		Getenv: a.getenv, Config: a.cfg, Store: a.st, Log: a.log,
		Server: a.server.Path, ServerErr: a.serverErr,
		// The tray shows a count: lifecycle events only, and no record
		// files (servers rewrite them on every use).
		Source:   sandboxwatch.DockerSource{LifecycleOnly: true},
		OnChange: a.onSnapshot,
		Looked:   a.engineLooked,
		Lost:     a.engineLost,
	})
}

// onSnapshot shows the sandbox model's count (on its goroutine). On a
// cluster, which is polled, a list that fails is the cluster not
// answering, and one that succeeds is it answering again.
func (a *App) onSnapshot(snap sandboxwatch.Snapshot) {
	c := snap.Count()
	note := ""
	a.update(func(s *trayState) {
		s.sandboxes, s.warm = c.Sandboxes, c.Warm
		if s.cluster {
			note = clusterChangeNote(s.dockerOK, snap.Err == nil, s.engine)
			s.dockerOK = snap.Err == nil
		}
	})
	if note != "" {
		a.log.Info("kubernetes", "ok", snap.Err == nil, "err", snap.Err)
		a.notify(note)
	}
}

// clusterChangeNote is the notification when a followed cluster's list
// stops or starts succeeding again ("" when nothing changed). The
// cluster's error stays out of it (the log and the window have it).
func clusterChangeNote(wasOK, ok bool, place string) string {
	switch {
	case wasOK && !ok:
		return "The Kubernetes cluster (" + place + ") stopped answering: sandboxes cannot start or run until it is back. MCP Sandbox notices by itself."
	case !wasOK && ok:
		return "The Kubernetes cluster is reachable again: " + place
	}
	return ""
}

// engineLooked shows what a look for the engine found. On the engine
// loop's goroutine.
func (a *App) engineLooked(ctx context.Context, l engineconn.Look) {
	res, err := l.Result, l.Err
	a.update(func(s *trayState) {
		s.detecting, s.dockerOK, s.engine, s.cluster = false, err == nil, "", l.Cluster != nil
		if res.Chosen != nil {
			s.engine = res.Chosen.Engine
		}
		if l.Cluster != nil {
			s.engine = l.Cluster.Place()
		}
		if err != nil {
			s.sandboxes, s.warm = 0, 0
		}
	})
	if !a.firstRunDone && ctx.Err() == nil {
		a.firstRunDone = true
		a.firstRun(ctx, l.Conn)
	}
	a.checkHealth(ctx, l)
	if l.Cluster != nil {
		a.clusterLooked(ctx, l)
		return
	}
	a.log.Info("docker", "ok", err == nil, "reason", res.Reason)
	switch {
	case ctx.Err() != nil:
	case err != nil && !a.dockerLost:
		a.dockerLost = true
		a.notify("Docker is not reachable: sandboxes cannot start. " + res.Reason)
	case err == nil && a.dockerLost:
		a.dockerLost = false
		a.notify("Docker is reachable again: " + engineName(res))
	}
}

// clusterLooked logs and notifies what a look for the Kubernetes cluster
// found: it does not answer, or answers again. On the engine loop's
// goroutine.
func (a *App) clusterLooked(ctx context.Context, l engineconn.Look) {
	place := l.Cluster.Place()
	a.log.Info("kubernetes", "ok", l.Err == nil, "place", place)
	switch {
	case ctx.Err() != nil:
	case l.Err != nil && !a.dockerLost:
		a.dockerLost = true
		a.notify("The Kubernetes cluster (" + place + ") is not reachable: sandboxes cannot start. " + l.Err.Error())
	case l.Err == nil && a.dockerLost:
		a.dockerLost = false
		a.notify("The Kubernetes cluster is reachable again: " + place)
	}
}

// engineLost says the engine followed went away. On the engine loop's
// goroutine.
func (a *App) engineLost(err error) {
	a.dockerLost = true
	a.update(func(s *trayState) { s.dockerOK, s.sandboxes, s.warm = false, 0, 0 })
	a.log.Warn("the engine stopped answering", "err", err)
	a.notify("Docker is no longer reachable: sandboxes cannot start or run until it is back. Start it again; MCP Sandbox notices by itself.")
}

func engineName(res *dockerhost.Result) string {
	if res == nil || res.Chosen == nil {
		return "Docker"
	}
	return strings.TrimSpace(res.Chosen.Engine + " at " + res.Chosen.Host)
}

// dockerHostChanged looks for the engine again when the config's
// docker.host changed, so the tray never keeps following an engine the
// rule no longer picks.
func (a *App) dockerHostChanged(c *config.Config) {
	a.log.Debug("config changed; looking for the engine again", "host", c.Docker.Host, "backend", c.Backend.Kind)
	a.engine.Redetect()
}

// stopAll removes this installation's sandboxes on the engine the rule
// picks (engineconn.StopAll); others' are left alone.
func (a *App) stopAll(ctx context.Context) (sandboxwatch.Count, error) {
	conn := a.engine.Conn()
	if conn == nil && engineconn.OnCluster(a.cfg.Current()) {
		return sandboxwatch.Count{}, errNoCluster
	}
	if conn == nil {
		return sandboxwatch.Count{}, errNoDocker
	}
	n, err := engineconn.StopAll(ctx, conn.Backend, a.st, a.log)
	conn.Model.Refresh()
	return n, err
}

// firstRun configures Claude Desktop and Cursor on the tray's first start.
func (a *App) firstRun(ctx context.Context, conn *engineconn.Conn) {
	if a.serverErr != nil {
		a.log.Warn("first run skipped: no bundled server to point clients at")
		return
	}
	host := ""
	if conn != nil {
		host = conn.EntryHost
	}
	// Place: from the disk image or an App Translocation copy (macOS),
	// nothing is written and the message says to move the app first.
	rep, err := firstrun.Run(ctx, firstrun.Options{Env: a.clientEnv(), Command: a.server.Path, DockerHost: host, StateDir: a.st.Dir(),
		Place: installplace.Here(a.server.Path)})
	if err != nil {
		a.log.Warn("first run", "err", err)
		return
	}
	if rep.AlreadyDone {
		return
	}
	a.log.Info("first run", "configured", len(rep.Configured), "skipped", rep.Skipped, "failed", len(rep.Failed))
	if msg := rep.Message(); msg != "" {
		a.notify(msg)
	}
	a.refreshClients()
}

func (a *App) clientEnv() clientconfig.Env {
	return clientconfig.Env{Getenv: a.getenv}
}

func (a *App) entryHost() string { return a.engine.EntryHost() }

// refreshClients reads every client's state for the Clients submenu.
func (a *App) refreshClients() {
	var rows []traymenu.Client
	for _, c := range clientconfig.Clients() {
		st, _ := c.Status(clientconfig.StatusOptions{Env: a.clientEnv(), Command: a.server.Path, DockerHost: a.entryHost()})
		r := traymenu.Client{Name: c.Name(), Display: c.DisplayName()}
		if st != nil {
			r.Installed, r.Configured = st.Installed, st.Configured
		}
		rows = append(rows, r)
	}
	a.update(func(s *trayState) { s.clients = rows })
}

// configureFromTray is the Clients ▸ menu: configure, then say so.
func (a *App) configureFromTray(ctx context.Context, name string) {
	msg, err := a.configureClient(ctx, name)
	if err != nil {
		msg = "Could not set up " + name + ": " + err.Error()
	}
	a.notify(msg)
	a.refreshClients()
}

func (a *App) configureClient(ctx context.Context, name string) (string, error) {
	if a.serverErr != nil {
		return "", a.serverErr
	}
	return clientsetup.Configure(ctx, name, clientconfig.InstallOptions{Env: a.clientEnv(), Command: a.server.Path, DockerHost: a.entryHost()}, a.log)
}
