package trayapp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/firstrun"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// DialEngine finds the engine by dockerhost's rule (dockerhost.NewClient,
// the same as the server's and the CLI's) and checks that it answers. When
// the explicit choice (docker.host, DOCKER_HOST, a context) does not
// answer, the error wraps dockerhost.ErrExplicitUnreachable and names it:
// no other engine is reached, so neither the tray nor the window can ever
// act on one. The Result is returned in every case. The window process
// uses it too: one rule for the tray, the window and the servers.
func DialEngine(ctx context.Context, opts dockerhost.Options, log *slog.Logger) (*client.Client, *docker.Backend, *dockerhost.Result, error) {
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

// EntryHost is the DOCKER_HOST written into client entries for the chosen
// endpoint: a plain socket, pipe or tcp:// names it fully (TLS and ssh
// need more than a host). The config's docker.host is not copied: every
// server reads the same config file.
func EntryHost(c *dockerhost.Candidate) string {
	if c == nil || c.Source == "docker.host" || c.TLS != nil || strings.HasPrefix(c.Host, "ssh://") {
		return ""
	}
	return c.Host
}

// StopAll removes every managed sandbox (warm-pool ones too), whichever
// server made it, and returns how many it removed.
func StopAll(ctx context.Context, be *docker.Backend, st *state.Store, log *slog.Logger) (int, error) {
	list, err := be.List(ctx)
	if err != nil {
		return 0, err
	}
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		errs []error
	)
	for _, c := range list {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := be.Remove(ctx, c.ID); err != nil {
				mu.Lock()
				errs = append(errs, fmt.Errorf("%s: %w", c.Name, err))
				mu.Unlock()
				return
			}
			if id := c.Labels[sandbox.LabelID]; id != "" {
				_ = st.RemoveRecord(id)
			}
		}()
	}
	wg.Wait()
	log.Info("stopped all sandboxes", "count", len(list)-len(errs), "failed", len(errs))
	return len(list) - len(errs), errors.Join(errs...)
}

// engineConn is the engine the tray follows while it answers.
type engineConn struct {
	cli       *client.Client
	be        *docker.Backend
	model     *sandboxwatch.Model
	entryHost string
}

// retryDocker is how long the tray waits before looking for Docker again
// when none answered.
const retryDocker = 30 * time.Second

// dockerLoop finds the engine, follows its sandboxes by the events stream
// until it goes away (no polling: the model relists on events only, and
// never samples usage, which only the window shows), and starts over. It
// runs the first-run set-up once an endpoint is known, and notifies when
// Docker is lost or found again.
func (a *App) dockerLoop(ctx context.Context) {
	firstRunDone := false
	lost := false // Docker was seen and went away, or was never found
	for ctx.Err() == nil {
		conn, res, err := a.connect(ctx)
		if !firstRunDone && ctx.Err() == nil {
			firstRunDone = true
			a.firstRun(ctx, conn)
		}
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			if !lost {
				lost = true
				a.notify("Docker is not reachable: sandboxes cannot start. " + res.Reason)
			}
			a.waitRedetect(ctx, retryDocker)
			continue
		}
		if lost {
			lost = false
			a.notify("Docker is reachable again: " + engineName(res))
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
			lost = true
			a.update(func(s *trayState) { s.dockerOK, s.sandboxes = false, 0 })
			a.notify("Docker is no longer reachable: " + err.Error())
			a.waitRedetect(ctx, 2*time.Second)
		}
	}
}

func engineName(res *dockerhost.Result) string {
	if res == nil || res.Chosen == nil {
		return "Docker"
	}
	return strings.TrimSpace(res.Chosen.Engine + " at " + res.Chosen.Host)
}

func (a *App) waitRedetect(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-a.redetect:
	case <-t.C:
	}
}

// dockerHostChanged looks for the engine again when the config's
// docker.host changed, so the tray never keeps following an engine the
// rule no longer picks.
func (a *App) dockerHostChanged(c *config.Config) {
	a.log.Debug("config changed; looking for Docker again", "host", c.Docker.Host)
	select {
	case a.redetect <- struct{}{}:
	default:
	}
}

// connect finds the engine by the one rule and prepares to follow it.
func (a *App) connect(ctx context.Context) (*engineConn, *dockerhost.Result, error) {
	cfg := a.cfg.Current()
	dctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	cli, be, res, err := DialEngine(dctx, dockerhost.Options{Getenv: a.getenv, ConfigHost: cfg.Docker.Host, ConfigFile: cfg.Source}, a.log)
	if res == nil {
		res = &dockerhost.Result{}
	}
	var conn *engineConn
	if err == nil {
		conn = &engineConn{cli: cli, be: be, entryHost: EntryHost(res.Chosen)}
		conn.model = sandboxwatch.New(sandboxwatch.Options{
			// The tray shows a count: lifecycle events only, and no
			// record files (servers rewrite them on every use).
			Source: sandboxwatch.DockerSource{
				Lister:        sandbox.Lister{Backend: be, State: a.st},
				Client:        cli,
				LifecycleOnly: true,
			},
			OnChange: func(snap sandboxwatch.Snapshot) {
				a.update(func(s *trayState) { s.sandboxes = len(snap.Rows) })
			},
			Log: a.log,
		})
	}
	a.update(func(s *trayState) {
		s.detecting, s.dockerOK, s.engine = false, err == nil, ""
		if res.Chosen != nil {
			s.engine = res.Chosen.Engine
		}
		if err != nil {
			s.sandboxes = 0
		}
	})
	a.log.Info("docker", "ok", err == nil, "reason", res.Reason)
	return conn, res, err
}

// stopAll removes every managed sandbox on the engine the rule picks.
func (a *App) stopAll(ctx context.Context) (int, error) {
	a.mu.Lock()
	conn := a.docker
	a.mu.Unlock()
	if conn == nil {
		return 0, errNoDocker
	}
	n, err := StopAll(ctx, conn.be, a.st, a.log)
	conn.model.Refresh()
	return n, err
}

// firstRun configures Claude Desktop and Cursor on the tray's first start.
func (a *App) firstRun(ctx context.Context, conn *engineConn) {
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
		a.notify(msg)
	}
	a.refreshClients()
}

func (a *App) clientEnv() clientconfig.Env {
	return clientconfig.Env{Getenv: a.getenv}
}

func (a *App) entryHost() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.docker != nil {
		return a.docker.entryHost
	}
	return ""
}

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
	c, err := clientconfig.Lookup(name)
	if err != nil {
		return "", err
	}
	res, err := c.Install(ctx, clientconfig.InstallOptions{Env: a.clientEnv(), Command: a.server.Path, DockerHost: a.entryHost(), Force: true})
	if err != nil {
		return "", err
	}
	a.log.Info("configured client", "client", name, "path", res.Path, "backup", res.Backup)
	if !res.Changed {
		return fmt.Sprintf("%s was already set up in %s.", c.DisplayName(), res.Path), nil
	}
	return fmt.Sprintf("Set up %s in %s. Restart %s to load it.", c.DisplayName(), res.Path, c.DisplayName()), nil
}
