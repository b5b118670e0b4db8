package server

import (
	"context"
	"io"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/memtrim"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// closeTimeout bounds the removal of this server's sandboxes once it stops.
const closeTimeout = 60 * time.Second

// Options are what Run serves with: the backend, config and state the
// caller opened, and how to serve.
type Options struct {
	Backend backend.Backend
	Config  *config.Watcher
	State   *state.Store
	Log     *slog.Logger

	// Watchdog names the engine the watchdog must find again; Run fills
	// in the owner.
	Watchdog WatchdogArgs

	// HTTPAddr, when set, serves streamable HTTP on it instead of stdio;
	// AllowRemote accepts an address beyond loopback.
	HTTPAddr    string
	AllowRemote bool

	// Stdin and Stdout are the stdio transport's.
	Stdin  io.Reader
	Stdout io.Writer
	// Getenv reads the environment (MCP_SANDBOX_TOKEN); nil is os.Getenv.
	Getenv func(string) string

	// Gate, when set, says why the server cannot carry out tool calls
	// now (a config file that does not load, say): while it returns an
	// error every tool call is that error, and the engine's background
	// work (expiry, the warm pool, reaping) waits for it to return nil.
	Gate func() error
}

func (o Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

// Run serves MCP until the client leaves or ctx ends, then removes this
// server's sandboxes (bounded by closeTimeout) and, when that worked,
// releases the watchdog. It returns the transport's error.
func Run(ctx context.Context, o Options) error {
	log := o.Log
	var ln net.Listener
	var remote bool
	if o.HTTPAddr != "" {
		var err error
		if ln, remote, err = listenHTTP(o); err != nil {
			return err
		}
	}
	asker := newAsker(o.Config, o.State, log)
	eng := sandbox.NewEngine(sandbox.Options{Backend: o.Backend, Config: o.Config, State: o.State, Log: log, Ask: asker.Ask, AskEntries: asker.AskEntries})
	announce(log, eng, o.HTTPAddr != "")
	bg, cancelBG := context.WithCancel(ctx)
	defer cancelBG()
	wd := startEngine(bg, log, eng, o)

	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: buildinfo.Version, Log: log, State: o.State, Asker: asker, Gate: o.Gate})
	var err error
	if o.HTTPAddr != "" {
		err = serveHTTP(ctx, log, srv, o, ln, remote)
	} else {
		err = serveStdio(ctx, log, srv, o.Stdin, o.Stdout)
	}
	cancelBG()
	log.Info("stopping; removing this server's sandboxes")
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), closeTimeout)
	defer cancel()
	if cerr := eng.Close(cctx); cerr != nil {
		log.Warn("remove sandboxes; the watchdog tries again", "err", cerr)
	} else {
		wd.Release()
	}
	return err
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
func startEngine(bg context.Context, log *slog.Logger, eng *sandbox.Engine, o Options) *Watchdog {
	// Before the first container: however this process ends, its
	// watchdog removes what it leaves.
	args := o.Watchdog
	args.Owner = eng.Owner()
	wd := StartWatchdog(bg, log, args)
	go o.Config.Run(bg)
	go func() {
		if waitGate(bg, o.Gate) {
			startBackground(bg, log, eng)
		}
	}()
	return wd
}

// gatePoll is how often a gated server looks whether it may start its
// engine's background work (the config file is re-read every second).
const gatePoll = time.Second

// waitGate returns true once gate (nil: open) returns nil, false when ctx
// ends first.
func waitGate(ctx context.Context, gate func() error) bool {
	if gate == nil || gate() == nil {
		return true
	}
	t := time.NewTicker(gatePoll)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-t.C:
			if gate() == nil {
				return true
			}
		}
	}
}

// startBackground starts the engine's background work: expiry and the
// warm pool, memory trimming and the start-up reaping.
func startBackground(bg context.Context, log *slog.Logger, eng *sandbox.Engine) {
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
}
