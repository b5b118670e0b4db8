package cli

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// configInterval is how often a server re-reads its config file.
const configInterval = time.Second

// openServe is the server's set-up, which never stops it from answering
// its client: a config file that does not load, or a cluster that does
// not answer, becomes the gate's error, which every tool call returns
// while it lasts (sandbox/server.Options.Gate). Only a state directory
// that cannot be opened is an error here.
func openServe(ctx context.Context, e *Env, log *slog.Logger) (*setup, func() error, error) {
	w, cfgErr := config.NewWatcherOrDefaults(e.configPath(), configInterval, log)
	st, err := state.Open(config.StateDir())
	if err != nil {
		return nil, nil, err
	}
	if cfgErr != nil {
		// The defaults' engine (detection): no tool call reaches it
		// while the file does not load, nor after unless the file
		// chooses the same.
		log.Warn("config file invalid; every tool call says so until it is fixed", "err", cfgErr)
	}
	s, err := newServeSetup(ctx, e, log, w, st)
	if err != nil {
		cause := fmt.Errorf("%w; fix that, then restart MCP Sandbox in your AI client", err)
		log.Warn("no backend; every tool call says why", "err", err)
		return &setup{cfg: w, backend: backend.Unavailable{Err: cause}, state: st, host: "none"}, func() error { return cause }, nil
	}
	return s, configGate(w, cfgErr != nil), nil
}

// configGate is the gate of a server on w: while the file does not load,
// its error and how to fix it. startedInvalid says the server chose its
// engine from the defaults; a file that then loads and chooses another
// one (a cluster, docker.host) needs a restart, never the defaults' engine
// in its place.
func configGate(w *config.Watcher, startedInvalid bool) func() error {
	return func() error {
		if err := w.Err(); err != nil {
			return fmt.Errorf("%w; fix the file: the server re-reads it within seconds, no restart needed", err)
		}
		c := w.Current()
		if startedInvalid && (c.Backend.Kind == config.BackendKubernetes || c.Docker.Host != "") {
			return fmt.Errorf("%s loads now and chooses another engine than the one this server started on while it did not load; restart MCP Sandbox in your AI client to use it", c.Source)
		}
		return nil
	}
}
