package trayapp

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/firstrun"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
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
// and starts over; it also runs the first-run set-up once an endpoint is
// known.
func (a *App) dockerLoop(ctx context.Context) {
	firstRunDone := false
	for ctx.Err() == nil {
		a.update(func(s *uiState) { s.detecting = true })
		conn, err := a.connect(ctx)
		if !firstRunDone && ctx.Err() == nil {
			firstRunDone = true
			a.firstRun(ctx, conn)
		}
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
			a.update(func(s *uiState) { s.dockerOK = false; s.snap = sandboxwatch.Snapshot{Err: err} })
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
	cli, be, res, err := dialEngine(dctx, dockerhost.Options{Getenv: a.getenv, ConfigHost: cfg.Docker.Host, ConfigFile: cfg.Source}, a.log)
	var conn *dockerConn
	runtime := ""
	if err == nil {
		runtime = a.runtimeOf(dctx, cli)
		conn = &dockerConn{cli: cli, be: be, entryHost: entryHost(res.Chosen)}
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
		s.detecting, s.docker, s.dockerOK, s.cfgHost, s.runtime = false, res, err == nil, cfg.Docker.Host, runtime
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

// dialEngine finds the engine by dockerhost's rule (dockerhost.NewClient,
// the same as the server's and the CLI's) and checks that it answers. When
// the explicit choice (docker.host, DOCKER_HOST, a context) does not
// answer, the error wraps dockerhost.ErrExplicitUnreachable and names it:
// no other engine is reached, so the tray's "Stop all" can never act on
// one. The Result is returned in every case, for the Status tab.
func dialEngine(ctx context.Context, opts dockerhost.Options, log *slog.Logger) (*client.Client, *docker.Backend, *dockerhost.Result, error) {
	cli, res, err := dockerhost.NewClient(ctx, opts)
	if err != nil {
		return nil, nil, res, err
	}
	be := docker.New(cli, log)
	if err := be.Ping(ctx); err != nil {
		cli.Close()
		return nil, nil, res, err
	}
	return cli, be, res, nil
}

// entryHost is the DOCKER_HOST written into client entries for the chosen
// endpoint: a plain socket, pipe or tcp:// names it fully (TLS and ssh
// need more than a host). The config's docker.host is not copied: every
// server reads the same config file.
func entryHost(c *dockerhost.Candidate) string {
	if c == nil || c.Source == "docker.host" || c.TLS != nil || strings.HasPrefix(c.Host, "ssh://") {
		return ""
	}
	return c.Host
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
			a.drawTray(false)
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

// firstRun configures Claude Desktop and Cursor on the tray's first start.
func (a *App) firstRun(ctx context.Context, conn *dockerConn) {
	if a.serverErr != nil {
		a.log.Warn("first run skipped: no bundled server to point clients at")
		return
	}
	host := ""
	if conn != nil {
		host = conn.entryHost
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
		a.do(func() { a.notify(msg) })
	}
	a.refreshClients()
}

func (a *App) clientEnv() clientconfig.Env {
	return clientconfig.Env{Getenv: a.getenv}
}
