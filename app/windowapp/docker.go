//go:build cgo

package windowapp

import (
	"context"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// newEngineLoop makes the loop that follows the engine by dockerhost's one
// rule, with the config's docker.host: with an explicit choice that does
// not answer, nothing is followed and the Status and Sandboxes tabs show
// the error, which names the choice; the loop then tries the same rule
// again, so the chosen engine is used as soon as it answers.
func (a *App) newEngineLoop() *engineconn.Loop {
	return engineconn.New(engineconn.Options{
		Getenv: a.getenv, Config: a.cfg, Store: a.st, Log: a.log,
		Server: a.server.Path, ServerErr: a.serverErr,
		Source:   sandboxwatch.DockerSource{RecordsDir: filepath.Join(a.st.Dir(), "sandboxes")},
		OnChange: a.onSnapshot,
		Looking:  a.engineLooking,
		Looked:   a.engineLooked,
		Lost:     a.engineLost,
	})
}

// engineLooked shows what a look for the engine found. On the engine
// loop's goroutine.
func (a *App) engineLooked(ctx context.Context, l engineconn.Look) {
	if l.Cluster != nil {
		a.clusterLooked(ctx, l)
		return
	}
	res, err := l.Result, l.Err
	runtime := ""
	if l.Conn != nil {
		rctx, cancel := context.WithTimeout(ctx, 8*time.Second)
		runtime = a.runtimeOf(rctx, l.Conn.Client)
		cancel()
	}
	a.update(func(s *uiState) {
		s.detecting, s.docker, s.dockerOK, s.cfgHost, s.runtime, s.lost = false, res, err == nil, l.Key, runtime, ""
		s.cluster = nil
		if err != nil {
			s.snap = sandboxwatch.Snapshot{Err: err}
		}
	})
	if err != nil {
		a.do(func() { a.win.Sandboxes.Set(sandboxwatch.Snapshot{Err: err}) })
	}
	a.log.Info("docker", "ok", err == nil, "reason", res.Reason, "runtime", runtime)
	if a.serverErr == nil {
		a.fetchServerVersion(ctx)
	}
	conn := l.Conn
	a.goBG(func(ctx context.Context) { a.checkHealth(ctx, conn) }) // probes take seconds: the list need not wait
	if err != nil {
		a.log.Warn("docker", "err", err)
	}
}

// engineLost shows that the engine followed stopped answering. On the
// engine loop's goroutine.
func (a *App) engineLost(err error) {
	a.update(func(s *uiState) {
		s.dockerOK = false
		s.snap = sandboxwatch.Snapshot{Err: err}
		s.lost = "the engine stopped answering: " + err.Error()
	})
	a.do(func() { a.win.Sandboxes.Set(sandboxwatch.Snapshot{Err: err}) })
}

// dockerHostChanged looks for the engine again when the config's
// docker.host is not the one the last look was made under, so the window
// never keeps following an engine the rule no longer picks.
func (a *App) dockerHostChanged(c *config.Config) {
	a.mu.Lock()
	changed := engineconn.EngineKey(c) != a.ui.cfgHost
	a.mu.Unlock()
	if changed {
		a.log.Info("the engine's settings changed; looking for the engine again", "host", c.Docker.Host, "backend", c.Backend.Kind)
		a.engine.Redetect()
		return // the look checks health again
	}
	// Images or limits may have changed: the cards follow.
	a.goBG(func(ctx context.Context) { a.checkHealth(ctx, a.engine.Conn()) })
}

// runtimeOf says which OCI runtime sandboxes get under the config's
// docker.runtime on this engine.
func (a *App) runtimeOf(ctx context.Context, cli *client.Client) string {
	info, err := cli.Info(ctx)
	if err != nil {
		return "unknown (" + err.Error() + ")"
	}
	_, gvisor := info.Runtimes["runsc"]
	def := info.DefaultRuntime
	if def == "" {
		def = "runc"
	}
	switch a.cfg.Current().Docker.Runtime {
	case "runsc":
		if !gvisor {
			return "gVisor (runsc) is asked for, but the engine has no runsc registered: sandboxes fail to start"
		}
		return "gVisor (runsc)"
	case "auto":
		if gvisor {
			return "gVisor (runsc), chosen by runtime = auto"
		}
		return def + ": runtime = auto found no gVisor (runsc) registered"
	case "runc":
		return "runc"
	}
	if gvisor {
		return def + " (the engine's default); gVisor is registered: set runtime to auto or runsc to use it"
	}
	return def + " (the engine's default); gVisor is not registered"
}

// fetchServerVersion asks the bundled server for its version once.
func (a *App) fetchServerVersion(ctx context.Context) {
	a.mu.Lock()
	have := a.ui.version != ""
	a.mu.Unlock()
	if have {
		return
	}
	info, err := bundled.Version(ctx, a.server.Path)
	v := info.String()
	if err != nil {
		v = "unknown: " + err.Error()
	}
	a.update(func(s *uiState) { s.version = v })
}

// onSnapshot receives the sandbox model's snapshots (on its goroutine).
func (a *App) onSnapshot(snap sandboxwatch.Snapshot) {
	a.mu.Lock()
	countChanged := snap.Count() != a.ui.snap.Count()
	a.ui.snap = snap
	// A cluster is polled: a list that fails is the cluster not
	// answering, one that succeeds is it answering again.
	if c := a.ui.cluster; c != nil && c.Answered && (snap.Err != nil) != (c.Err != "") {
		next := *c
		next.Err = ""
		if snap.Err != nil {
			next.Err = snap.Err.Error()
		}
		a.ui.cluster = &next
		countChanged = true
	}
	a.mu.Unlock()
	a.do(func() {
		a.win.Sandboxes.Set(snap)
		if countChanged {
			a.pushStatus()
		}
	})
	a.refreshServers() // the sandboxes each owns; a killed one's lock freed
	a.idle.Touch()
}

// viewChanged watches the audit log only while the Activity tab is seen.
// The tab in view
// goes to the log, like the headline: what the person was looking at, and
// when, can be read back (the GUI tests follow their clicks by it).
func (a *App) viewChanged(tab string, visible bool) {
	a.log.Info("view", "tab", tab, "visible", visible)
	a.idle.Touch()
	a.watchAudit(visible && tab == ui.TabActivity)
	if visible && tab == ui.TabActivity {
		a.markSeen()
	}
}

// usageSeen samples usage only while it is on screen (the Sandboxes tab
// or a details view), on whichever engine is followed now or later.
func (a *App) usageSeen(seen bool) {
	a.log.Info("usage on screen", "seen", seen)
	a.engine.SetLive(seen)
}

// markSeen tells the tray the person has seen the failed calls (the
// window opened, or its Activity tab): the tray clears its badge.
func (a *App) markSeen() {
	if err := traywin.MarkActivitySeen(a.st.Dir()); err != nil {
		a.log.Warn("mark the activity seen", "err", err)
	}
}

func (a *App) clientEnv() clientconfig.Env {
	return clientconfig.Env{Getenv: a.getenv}
}
