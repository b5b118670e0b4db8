package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/server"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// runWatchdog is the hidden server.WatchdogCommand: it connects, while its
// server lives, to exactly the engine the server used (the same detection
// options: the inherited environment and the server's docker.host; an
// explicit choice is the only endpoint dialled; on Kubernetes, the
// config's cluster), then runs server.Watch on its stdin, which removes
// every container and volume of the server's owner id once the server's
// process ends in any way, and exits.
func runWatchdog(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, server.WatchdogCommand, "--owner ID")
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
	if server.Watch(ctx, e.Stdin, be, st, *owner, log) != nil {
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
