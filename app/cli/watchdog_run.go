package cli

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// watchdogPatience bounds how long a watchdog keeps trying to remove what
// its server left when the engine does not answer (Docker Desktop
// restarting, say). Past it, the next server's start-up reaping is the
// only clean-up left.
const watchdogPatience = 5 * time.Minute

// releasedCheck bounds the one look a watchdog takes after a server that
// removed everything itself.
const releasedCheck = 10 * time.Second

// runWatchdog is the hidden watchdogCommand: it waits until its stdin (the
// pipe whose write end only its server holds) ends, which happens when the
// server's process ends in any way, then removes every container and
// volume of the server's owner id through the engine's code, on exactly
// the engine the server used (the same detection options: the inherited
// environment and the server's docker.host; an explicit choice is the
// only endpoint dialled; on Kubernetes, the config's cluster), and exits.
func runWatchdog(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, watchdogCommand, "--owner ID")
	owner := fs.String("owner", "", "the server's owner `ID`")
	serverPID := fs.Int("server-pid", 0, "the server's process id (for the log)")
	configHost := fs.String("config-host", "", "the config's docker.host as the server read it")
	configFile := fs.String("config-file", "", "the config file (for messages; with --backend kubernetes, its [kubernetes] table)")
	kind := fs.String("backend", "", "the server's backend.kind")
	debug := fs.Bool("debug", false, "log debug messages")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	if *owner == "" {
		fmt.Fprintln(e.Stderr, "mcp-sandbox: --owner is required")
		return 2
	}
	log, closeLog := openLog(e.Stderr, "server", logLevel(*debug))
	defer closeLog()
	log = log.With("watchdog_of", *serverPID)
	be, closeBackend, err := watchdogBackend(ctx, e, *kind, *configHost, *configFile, log)
	if err != nil {
		log.Error("watchdog: backend", "err", err)
		return 1
	}
	defer closeBackend()
	st, err := state.Open(config.StateDir())
	if err != nil {
		log.Warn("watchdog: state directory; sandbox records stay until the next reaping", "err", err)
		st = nil
	}
	// EOF, or any error: the server is gone. Nothing is logged from here
	// on unless something was left: the server's state directory may be
	// going away with it (a test's, say).
	// The first byte decides: the release, which the server writes and
	// then waits for this process to finish (it keeps the pipe open until
	// then, so waiting for EOF here would hold both), or EOF.
	var first [1]byte
	n, _ := io.ReadFull(e.Stdin, first[:])
	released := n == 1 && first[0] == watchdogReleased
	if !released {
		_, _ = io.Copy(io.Discard, e.Stdin)
	}
	log = log.With("by", "watchdog")
	if released {
		// The server removed everything itself: one look, no retries.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releasedCheck)
		defer cancel()
		_, _ = sandbox.RemoveOwnerOnce(rctx, be, st, *owner, log)
		return 0
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), watchdogPatience)
	defer cancel()
	if _, err := sandbox.RemoveOwner(rctx, be, st, *owner, log); err != nil {
		log.Error("watchdog: could not remove everything of the server; the next server to start reaps the rest", "err", err)
		return 1
	}
	return 0
}

// watchdogBackend connects, now while the server lives, to the backend the
// server used: with kind "kubernetes" the cluster the config file's
// [kubernetes] table names; else the Docker engine by the server's
// detection options (a client on a local socket re-detects by the same rule
// when it must: dockerhost.Connect).
func watchdogBackend(ctx context.Context, e *Env, kind, configHost, configFile string, log *slog.Logger) (backend.Backend, func(), error) {
	dctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if kind == config.BackendKubernetes {
		cfg, err := config.Load(configFile)
		if err != nil {
			return nil, nil, err
		}
		_, be, err := selectKubernetes(dctx, cfg, log)
		if err != nil {
			return nil, nil, err
		}
		return be, func() {}, nil
	}
	conn, err := dockerhost.Connect(dctx, dockerhost.Options{Getenv: e.getenv, ConfigHost: configHost, ConfigFile: configFile})
	if err != nil {
		return nil, nil, fmt.Errorf("docker client: %w", err)
	}
	return docker.New(conn.Client, log), func() { conn.Client.Close() }, nil
}
