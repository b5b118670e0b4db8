// Package server starts the MCP server on a backend the caller chose: it
// builds the engine from the config, wires the asker (MCP elicitation,
// else the tray), starts the watchdog and the engine's background work,
// serves MCP over stdio or streamable HTTP until the client leaves or the
// context ends, then removes this server's sandboxes. It also holds the
// watchdog's own side (Watch), which the command line runs as the hidden
// WatchdogCommand.
//
// Choosing and connecting the backend (Docker or Kubernetes), the flags,
// the log file and the process's signals are the command line's (app/cli).
package server
