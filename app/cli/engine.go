package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/applog"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// connectDocker returns a client for the engine to use: the config file's
// docker.host if set, else DOCKER_HOST (with its TLS variables), else the
// endpoint detection finds. When nothing answers it still returns a client
// so the server can start and each tool call can say what to do. A local
// socket is dialled through a Redialer (returned), so an engine that starts
// later is found; the string says how the endpoint was chosen.
func connectDocker(ctx context.Context, e *Env, cfg *config.Config) (*client.Client, *dockerhost.Redialer, string, error) {
	if cfg.Docker.Host != "" {
		c := dockerhost.Candidate{Host: cfg.Docker.Host}
		cli, err := client.NewClientWithOpts(c.ClientOptions()...)
		return cli, nil, "docker.host in " + cfg.Source, err
	}
	detect := func(ctx context.Context) *dockerhost.Result {
		return dockerhost.Detect(ctx, dockerhost.Options{Getenv: e.getenv})
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res := detect(dctx)
	local := res.Chosen == nil || strings.HasPrefix(res.Chosen.Host, "unix://")
	if local && runtime.GOOS != "windows" && e.getenv("DOCKER_HOST") == "" {
		// A local engine can come up later or move (Colima started after
		// the AI client): dial through a redialer that finds it again.
		host := ""
		why := "no engine answered yet; it is looked for again on each call: " + res.Hint
		if res.Chosen != nil {
			host, why = res.Chosen.Host, res.Reason
		}
		r := dockerhost.NewRedialer(host, detect)
		cli, err := client.NewClientWithOpts(r.ClientOptions()...)
		return cli, r, why, err
	}
	if res.Chosen != nil {
		cli, err := client.NewClientWithOpts(res.Chosen.ClientOptions()...)
		return cli, nil, res.Reason, err
	}
	host := client.DefaultDockerHost
	if h := e.getenv("DOCKER_HOST"); h != "" {
		host = h
	}
	cli, err := client.NewClientWithOpts(client.WithHost(host), client.WithAPIVersionNegotiation())
	return cli, nil, "no engine answered; " + res.Hint, err
}

// setup is what every command that touches sandboxes needs.
type setup struct {
	cfg     *config.Watcher
	cli     *client.Client
	backend *docker.Backend
	state   *state.Store
	why     string
}

func newSetup(ctx context.Context, e *Env, log *slog.Logger) (*setup, error) {
	w, err := config.NewWatcher(e.configPath(), 2*time.Second, log)
	if err != nil {
		return nil, err
	}
	st, err := state.Open(config.StateDir())
	if err != nil {
		return nil, err
	}
	cli, redial, why, err := connectDocker(ctx, e, w.Current())
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	be := docker.New(cli, log)
	if redial != nil {
		be.SetHostName(func() string {
			if p := redial.Path(); p != "" {
				return "unix://" + p
			}
			return "(no engine found yet)"
		})
	}
	return &setup{cfg: w, cli: cli, backend: be, state: st, why: why}, nil
}

func (s *setup) close() { s.cli.Close() }

func (s *setup) lister(usage bool) sandbox.Lister {
	return sandbox.Lister{Backend: s.backend, State: s.state, Usage: usage}
}

// openLog returns a logger writing to w and to <state dir>/logs/NAME.log,
// which rotates by size (app/applog, as the tray's log does).
func openLog(w io.Writer, name string, level slog.Level) (*slog.Logger, func()) {
	var out io.Writer = w
	closer := func() {}
	if f, err := applog.Open(filepath.Join(config.StateDir(), "logs"), name, applog.Options{}); err == nil {
		out = io.MultiWriter(w, f)
		closer = func() { f.Close() }
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level})).With("pid", os.Getpid()), closer
}
