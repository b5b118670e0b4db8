package server

import (
	"log/slog"
	"os"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// newAsker asks the person for a host beyond the config's list through
// the client (MCP elicitation), else through the tray (the state
// directory's asks folder); "Always allow" writes the config in use: its
// Source, never empty, since the watcher names its own file (the --config
// path or config.Path()) even while the file is missing.
// MCP_SANDBOX_ASK_TIMEOUT may shorten the wait for an answer (tests),
// never lengthen it.
func newAsker(cfg *config.Watcher, st *state.Store, log *slog.Logger) *mcpserver.Asker {
	return mcpserver.NewAsker(mcpserver.AskerOptions{ConfigPath: cfg.Current().Source, Log: log, State: st, Timeout: askTimeout(log)})
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
