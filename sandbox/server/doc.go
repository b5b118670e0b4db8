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
//
// # The watchdog
//
// Before its first container, serve starts the watchdog: the same
// executable re-run with the hidden command (on Linux from /proc/self/exe,
// so an upgrade that replaced the binary does not change it), in a session
// and process group of its own, with no stdout or stderr, and as stdin the
// read end of a pipe whose write end only the server holds
// (close-on-exec). When the server's process ends in any way, the kernel
// closes the write end; the watchdog reads EOF and removes every container
// and unused volume labelled with the server's owner (inventory.RemoveOwner),
// on the engine the server chose by the same rule, in passes until three
// in a row, a second apart, find nothing, retrying an engine that does not
// answer for up to 5 minutes. A server whose own clean-up succeeded writes
// one byte first; its watchdog then takes one look (at most 10 s) and
// exits. A watchdog that ends while its server lives is started again
// (after 1 s, backing off to 30 s). mcp-sandbox run starts the same one.
//
// A server's own clean-up starts when its client goes away: stdin ends,
// stdout is closed (SIGPIPE is caught) or takes nothing for 30 s, or on
// SIGTERM, SIGINT or SIGHUP. Writes to the client go through one goroutine
// with that deadline, and stderr's copy of the log drops lines rather than
// block; after a signal the server waits for its transport at most 3 s,
// then removes everything (bounded by 60 s).
//
// Imports: sandbox, sandbox/backend, sandbox/buildinfo, sandbox/config, sandbox/inventory, sandbox/mcpserver, sandbox/memtrim, sandbox/state
package server
