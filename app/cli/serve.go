package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/memtrim"
)

func init() {
	register(command{name: "serve", summary: "run the MCP server (stdio; --http for streamable HTTP on loopback)", run: runServe})
}

func runServe(ctx context.Context, e *Env, args []string) int {
	fs := newFlagSet(e, "serve", "[--config FILE] [--http 127.0.0.1:PORT] [--allow-remote] [--debug]")
	cfgPath := fs.String("config", "", "the config `FILE` (default: $MCP_SANDBOX_CONFIG, else the user's config dir; this flag wins over both)")
	httpAddr := fs.String("http", "", "serve streamable HTTP on this loopback `ADDRESS` (127.0.0.1:PORT) instead of stdio")
	allowRemote := fs.Bool("allow-remote", false, "allow --http on a non-loopback address (dangerous: anyone who has the token can run code)")
	debug := fs.Bool("debug", false, "log debug messages")
	if code, done := parseFlags(e, fs, args); done {
		return code
	}
	if *cfgPath != "" {
		abs, err := filepath.Abs(*cfgPath)
		if err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: --config %s: %v\n", *cfgPath, err)
			return 2
		}
		withConfig := *e
		withConfig.ConfigPath = abs
		e = &withConfig
	}
	if *httpAddr != "" {
		if _, err := checkHTTPAddr(*httpAddr, *allowRemote); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			return 2
		}
	}
	// stdout belongs to MCP: logs go to stderr and the log file.
	log, closeLog := openLog(e.Stderr, "server", logLevel(*debug))
	defer closeLog()

	// A client that closes its end of stdout must not kill the server
	// with SIGPIPE before it cleans up: with SIGPIPE caught, a write to
	// the closed pipe fails with EPIPE, which the stdio transport takes
	// as the client leaving.
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE)
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()

	s, err := newServeSetup(ctx, e, log)
	if err != nil {
		fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
		return 1
	}
	defer s.close()
	if s.docker != nil {
		log.Info("starting", "version", buildinfo.Get().String(), "docker", s.host, "why", s.docker.Reason, "config", s.cfg.Current().Source)
		if s.docker.Chosen == nil {
			log.Warn("no Docker engine is used yet; tool calls that need one say what to do", "hint", s.docker.Hint)
		}
	} else {
		log.Info("starting", "version", buildinfo.Get().String(), "backend", s.host, "config", s.cfg.Current().Source)
	}

	asker := newAsker(s, log)
	eng := sandbox.NewEngine(sandbox.Options{Backend: s.backend, Config: s.cfg, State: s.state, Log: log, Ask: asker.Ask, AskEntries: asker.AskEntries})
	announce(log, eng, *httpAddr != "")
	bg, cancelBG := context.WithCancel(ctx)
	defer cancelBG()
	wd := startEngine(bg, log, eng, s, *debug)

	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: buildinfo.Version, Log: log, State: s.state, Asker: asker})
	if *httpAddr != "" {
		err = serveHTTP(ctx, e, log, srv, s, *httpAddr, *allowRemote)
	} else {
		err = serveStdio(ctx, log, srv, e)
	}
	cancelBG()
	log.Info("stopping; removing this server's sandboxes")
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 60*time.Second)
	defer cancel()
	if cerr := eng.Close(cctx); cerr != nil {
		log.Warn("remove sandboxes; the watchdog tries again", "err", cerr)
	} else {
		wd.release()
	}
	if err != nil {
		log.Error("server stopped", "err", err)
		return 1
	}
	return 0
}

// announce writes what this server says of itself beside its lock, for
// the window's list of the servers running now.
func announce(log *slog.Logger, eng *sandbox.Engine, http bool) {
	transport := "stdio"
	if http {
		transport = "http"
	}
	if err := eng.Announce(transport, buildinfo.Version); err != nil {
		log.Warn("write this server's info file; the window does not list it", "err", err)
	}
}

// startEngine starts, until bg ends, the server's watchdog (which it
// returns) and the engine's background work: config reloads, expiry and
// the warm pool, memory trimming and the start-up reaping.
func startEngine(bg context.Context, log *slog.Logger, eng *sandbox.Engine, s *setup, debug bool) *watchdog {
	// Before the first container: however this process ends, its
	// watchdog removes what it leaves.
	wd := startWatchdog(bg, log, watchdogArgs{owner: eng.Owner(), configHost: s.configHost, configFile: s.cfg.Current().Source, backend: s.backendKind(), debug: debug})
	go s.cfg.Run(bg)
	go eng.Run(bg)
	// Between tool calls the server is idle for minutes: the heap that
	// start-up and each burst leave free goes back to the system.
	go memtrim.Run(bg, memtrim.Options{Log: log})
	go func() {
		res, err := eng.Reap(bg, sandbox.ReapRequest{})
		switch {
		case err != nil:
			log.Warn("reap orphaned sandboxes", "err", err)
		case len(res.Removed) > 0:
			log.Info("removed orphaned sandboxes", "ids", res.Removed)
		}
		log.Debug("start-up reaping done")
	}()
	return wd
}

// stdioGrace is how long the server waits, after a signal, for the stdio
// transport to wind down before it cleans up regardless.
const stdioGrace = 3 * time.Second

// serveStdio serves MCP on the process's stdio until the client leaves
// (stdin ends, stdout breaks or stops taking writes) or a signal ends ctx.
// After a signal it waits for the transport at most stdioGrace: a client
// that stopped reading can hold a write, and clean-up never waits on it.
func serveStdio(ctx context.Context, log *slog.Logger, srv *mcpserver.Server, e *Env) error {
	done := make(chan error, 1)
	go func() { done <- srv.ServeStdio(ctx, e.Stdin, e.Stdout) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
	}
	t := time.NewTimer(stdioGrace)
	defer t.Stop()
	select {
	case err := <-done:
		return err
	case <-t.C:
		log.Warn("the stdio transport did not end after the signal; cleaning up without it")
		return nil
	}
}

// newAsker asks the person for a host beyond the config's list through
// the client (MCP elicitation), else through the tray (the state
// directory's asks folder); "Always allow" writes the config in use: its
// Source, never empty, since the watcher names its own file (the --config
// path or config.Path()) even while the file is missing.
// MCP_SANDBOX_ASK_TIMEOUT may shorten the wait for an answer (tests),
// never lengthen it.
func newAsker(s *setup, log *slog.Logger) *mcpserver.Asker {
	return mcpserver.NewAsker(mcpserver.AskerOptions{ConfigPath: s.cfg.Current().Source, Log: log, State: s.state, Timeout: askTimeout(log)})
}

// askTimeout is MCP_SANDBOX_ASK_TIMEOUT when it is a duration shorter
// than the default, else 0 (the default).
func askTimeout(log *slog.Logger) time.Duration {
	v := os.Getenv("MCP_SANDBOX_ASK_TIMEOUT")
	if v == "" {
		return 0
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 || d > mcpserver.DefaultAskTimeout {
		log.Warn("MCP_SANDBOX_ASK_TIMEOUT ignored: not a duration up to the default", "value", v, "default", mcpserver.DefaultAskTimeout)
		return 0
	}
	return d
}
