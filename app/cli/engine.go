package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/applog"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/kubernetes"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// dockerOptions are the detection options of every command: the config's
// docker.host and the command's environment, so that serve, doctor, ps,
// stop and run pick the engine by the one rule in dockerhost.
func dockerOptions(e *Env, cfg *config.Config) dockerhost.Options {
	return dockerhost.Options{Getenv: e.getenv, ConfigHost: cfg.Docker.Host, ConfigFile: cfg.Source}
}

// setup is what every command that touches sandboxes needs.
type setup struct {
	cfg     *config.Watcher
	backend backend.Backend
	state   *state.Store
	// host says where the sandboxes run, for the server's log.
	host string
	// cli and docker are the Docker engine's (nil on Kubernetes).
	cli    *client.Client
	docker *dockerhost.Result
	// kube is the Kubernetes backend (nil on Docker).
	kube *kubernetes.Backend
	// configHost is the config's docker.host the engine was chosen with
	// (the server's watchdog chooses by the same).
	configHost string
}

// newSetup is the set-up of a command that acts now (ps, stop, run): when
// the engine the rule picks does not answer, it fails with the hint, which
// names an explicit choice (DOCKER_HOST, docker.host, a context) and what
// to do.
func newSetup(ctx context.Context, e *Env, log *slog.Logger) (*setup, error) {
	w, st, err := openConfigState(e.configPath(), log)
	if err != nil {
		return nil, err
	}
	if w.Current().Backend.Kind == config.BackendKubernetes {
		return newKubernetesSetup(ctx, w, st, log)
	}
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	opts := dockerOptions(e, w.Current())
	cli, res, err := dockerhost.NewClient(dctx, opts)
	if err != nil {
		return nil, err
	}
	be := docker.New(cli, log)
	return &setup{cfg: w, cli: cli, backend: be, host: be.Host(), state: st, docker: res, configHost: opts.ConfigHost}, nil
}

// newServeSetup is the server's set-up: it starts whatever is found, so
// that each tool call can say what to do, and its client keeps to the same
// rule (dockerhost.Connect): with an explicit choice, that endpoint and no
// other; without one, a local engine that starts later is found.
func newServeSetup(ctx context.Context, e *Env, log *slog.Logger, w *config.Watcher, st *state.Store) (*setup, error) {
	if w.Current().Backend.Kind == config.BackendKubernetes {
		return newKubernetesSetup(ctx, w, st, log)
	}
	// An AI client waits for the server: detection is cut short after 5s
	// (an engine that pinged still counts, its version then unknown).
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	opts := dockerOptions(e, w.Current())
	conn, err := dockerhost.Connect(dctx, opts)
	if err != nil {
		return nil, fmt.Errorf("docker client: %w", err)
	}
	be := docker.New(conn.Client, log)
	be.SetHostName(conn.Name)
	be.SetAdvice(conn.Advice)
	return &setup{cfg: w, cli: conn.Client, backend: be, host: be.Host(), state: st, docker: conn.Result, configHost: opts.ConfigHost}, nil
}

func openConfigState(path string, log *slog.Logger) (*config.Watcher, *state.Store, error) {
	w, err := config.NewWatcher(path, 2*time.Second, log)
	if err != nil {
		return nil, nil, err
	}
	st, err := state.Open(config.StateDir())
	if err != nil {
		return nil, nil, err
	}
	return w, st, nil
}

func (s *setup) close() {
	if s.cli != nil {
		s.cli.Close()
	}
	if s.kube != nil {
		s.kube.Close() // its staging loop and lease renewals
	}
}

func (s *setup) lister(usage bool) inventory.Lister {
	return inventory.Lister{Backend: s.backend, State: s.state, Usage: usage}
}

// logLevel is the level of a command's log: debug with --debug, else info.
func logLevel(debug bool) slog.Level {
	if debug {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// openLog returns a logger writing to w and to <state dir>/logs/NAME.log,
// which rotates by size (app/applog, as the tray's log does). The file is
// written first and w through a queue (asyncWriter): a stderr that blocks
// or fails loses lines, never the file's, and never stalls the caller.
func openLog(w io.Writer, name string, level slog.Level) (*slog.Logger, func()) {
	aw := newAsyncWriter(w)
	var out io.Writer = aw
	closer := func() { aw.Close(time.Second) }
	if f, err := applog.Open(filepath.Join(config.StateDir(), "logs"), name, applog.Options{}); err == nil {
		out = teeWriter{f, aw}
		closer = func() { aw.Close(time.Second); f.Close() }
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level})).With("pid", os.Getpid()), closer
}

// teeWriter writes to each of its writers in turn, whatever the others
// answer (unlike io.MultiWriter, which stops at the first error).
type teeWriter []io.Writer

func (t teeWriter) Write(p []byte) (int, error) {
	for _, w := range t {
		_, _ = w.Write(p)
	}
	return len(p), nil
}
