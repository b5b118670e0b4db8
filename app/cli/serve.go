package cli

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"syscall"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/server"
)

func init() {
	register(command{name: "serve", summary: "run the MCP server (stdio; --http for streamable HTTP on loopback)", run: runServe})
}

// runServe is the serve command: its flags, the log, the process's
// signals, and the backend the config chooses (newServeSetup); then
// sandbox/server serves on it until the client leaves or a signal comes.
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
		if _, err := server.CheckHTTPAddr(*httpAddr, *allowRemote); err != nil {
			fmt.Fprintf(e.Stderr, "mcp-sandbox: %v\n", err)
			return 2
		}
	}
	if *httpAddr == "" && e.Stdin == os.Stdin && e.getenv("GOMAXPROCS") == "" {
		// One client, and the server waits on it, the engine and the
		// sandbox: it never has two CPUs' work. With one P, handing a
		// message from goroutine to goroutine does not wake a second
		// thread on the other CPU (and move the work there, cold): in an
		// interleaved A/B of `sandbox_exec true` here (400 calls a side)
		// the call took 0.07 ms less and the server used 0.09 ms less CPU
		// for it. $GOMAXPROCS, when set, wins.
		runtime.GOMAXPROCS(1)
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

	s, gate, err := openServe(ctx, e, log)
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

	err = server.Run(ctx, server.Options{
		Backend: s.backend, Config: s.cfg, State: s.state, Log: log,
		Watchdog: server.WatchdogArgs{ConfigHost: s.configHost, ConfigFile: s.cfg.Current().Source, Backend: s.backendKind(), Debug: *debug},
		HTTPAddr: *httpAddr, AllowRemote: *allowRemote,
		Stdin: e.Stdin, Stdout: e.Stdout, Getenv: e.getenv,
		Gate: gate,
	})
	if err != nil {
		log.Error("server stopped", "err", err)
		return 1
	}
	return 0
}
