package windowapp

import (
	"context"
	"path/filepath"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/trayapp"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// dockerConn is the engine the tray talks to while it answers.
type dockerConn struct {
	cli   *client.Client
	be    *docker.Backend
	model *sandboxwatch.Model
	// entryHost is the DOCKER_HOST written into client entries: the
	// chosen endpoint when a plain socket or tcp:// names it fully.
	entryHost string
}

// retryDocker is how long the tray waits before looking for Docker again
// when none answered (or "Detect again" is pressed).
const retryDocker = 30 * time.Second

// dockerLoop finds the engine, follows its sandboxes until it goes away,
// and starts over.
func (a *App) dockerLoop(ctx context.Context) {
	for ctx.Err() == nil {
		a.update(func(s *uiState) { s.detecting = true })
		conn, err := a.connect(ctx)
		if err != nil {
			a.log.Warn("docker", "err", err)
			a.waitRedetect(ctx, retryDocker)
			continue
		}
		a.mu.Lock()
		a.docker = conn
		a.mu.Unlock()
		runCtx, cancel := context.WithCancel(ctx)
		go func() { // ends with runCtx
			select {
			case <-a.redetect:
				cancel()
			case <-runCtx.Done():
			}
		}()
		err = conn.model.Run(runCtx)
		cancel()
		conn.cli.Close()
		a.mu.Lock()
		a.docker = nil
		a.mu.Unlock()
		if err != nil && ctx.Err() == nil {
			a.log.Warn("lost the Docker events stream; looking for Docker again", "err", err)
			a.update(func(s *uiState) {
				s.dockerOK = false
				s.snap = sandboxwatch.Snapshot{Err: err}
				s.lost = "the engine stopped answering: " + err.Error()
			})
			a.do(func() { a.win.Sandboxes.Set(sandboxwatch.Snapshot{Err: err}) })
			a.waitRedetect(ctx, 2*time.Second)
		}
	}
}

func (a *App) waitRedetect(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-a.redetect:
	case <-time.After(d):
	}
}

// dockerHostChanged looks for the engine again when the config's
// docker.host is not the one the last look was made under, so the tray
// never keeps following an engine the rule no longer picks.
func (a *App) dockerHostChanged(c *config.Config) {
	a.mu.Lock()
	changed := c.Docker.Host != a.ui.cfgHost
	a.mu.Unlock()
	if changed {
		a.log.Info("docker.host changed; looking for Docker again", "host", c.Docker.Host)
		a.detectAgain()
	}
}

// detectAgain asks the loop to look for Docker now.
func (a *App) detectAgain() {
	select {
	case a.redetect <- struct{}{}:
	default:
	}
}

// connect finds the engine by dockerhost's one rule, with the config's
// docker.host, and follows it: with an explicit choice that does not
// answer, nothing is followed and the Status and Sandboxes tabs show the
// error, which names the choice; the loop then tries the same rule again,
// so the chosen engine is used as soon as it answers.
func (a *App) connect(ctx context.Context) (*dockerConn, error) {
	cfg := a.cfg.Current()
	dctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	cli, be, res, err := trayapp.DialEngine(dctx, dockerhost.Options{Getenv: a.getenv, ConfigHost: cfg.Docker.Host, ConfigFile: cfg.Source}, a.log)
	var conn *dockerConn
	runtime := ""
	if err == nil {
		runtime = a.runtimeOf(dctx, cli)
		conn = &dockerConn{cli: cli, be: be, entryHost: trayapp.EntryHost(res.Chosen)}
		conn.model = sandboxwatch.New(sandboxwatch.Options{
			Source: sandboxwatch.DockerSource{
				Lister:     sandbox.Lister{Backend: be, State: a.st},
				Client:     cli,
				RecordsDir: filepath.Join(a.st.Dir(), "sandboxes"),
			},
			OnChange: a.onSnapshot,
			Log:      a.log,
		})
	}
	a.update(func(s *uiState) {
		s.detecting, s.docker, s.dockerOK, s.cfgHost, s.runtime, s.lost = false, res, err == nil, cfg.Docker.Host, runtime, ""
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
	return conn, err
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
	countChanged := len(snap.Rows) != len(a.ui.snap.Rows)
	a.ui.snap = snap
	a.mu.Unlock()
	a.do(func() {
		a.win.Sandboxes.Set(snap)
		if countChanged {
			a.pushStatus()
		}
	})
}

// viewChanged samples usage only while the Sandboxes tab is seen, and
// watches the audit log only while the Activity tab is.
func (a *App) viewChanged(tab string, visible bool) {
	a.mu.Lock()
	conn := a.docker
	a.mu.Unlock()
	if conn != nil {
		conn.model.SetLive(visible && tab == ui.TabSandboxes)
	}
	a.watchAudit(visible && tab == ui.TabActivity)
}

func (a *App) clientEnv() clientconfig.Env {
	return clientconfig.Env{Getenv: a.getenv}
}
