// Package agent carries the resident agent that starts commands inside a
// sandbox (cmd/mcp-sandbox-agent), built for linux/amd64 and linux/arm64,
// and the protocol the engine speaks with it.
//
// The binaries in prebuilt/ are built from this module, reproducibly, by
//
//	go generate ./sandbox/agent
//
// (CGO_ENABLED=0, -trimpath, stripped, no build id, then gzip at the best
// level with an empty header), so that building the server needs nothing
// but the Go toolchain; TestBinariesReproducible rebuilds them and
// compares the bytes. They are kept compressed, and decompressed only as
// one is copied into a sandbox, so an idle server holds less of them.
//
// The engine attaches to the agent's stdin and stdout. It writes a first
// line, the nonce, then frames "NONCE KIND LENGTH\n" + payload (see package
// runner): "start" (a JSON [Start]) and "kill" (a JSON [Kill]). The agent
// answers "ready" once, then for each command any number of "out" and "err"
// frames, whose payload is the command's id, a newline and output bytes,
// and one "exit" frame (a JSON [Exit]) after the command has exited and
// its output has closed. A "file" frame (a JSON [File]) asks for the file
// tools' work; the agent answers with any number of "out" frames (the
// bytes read, or a listing's [ListEntry] JSON lines) and one "filedone"
// frame (a JSON [FileDone]). An agent whose "ready" says "streams": true
// also carries byte streams to TCP ports on the sandbox's loopback ("dial",
// "dialed", "data", "credit", "eof", "reset"), and listens on loopback
// ports, handing each connection to the engine as a stream ("listen",
// "listening", "accept", "unlisten"; see package proto); the
// engine sends those frames only to such an agent. From version 3 the
// "ready" also says "window": the credit the engine starts each stream
// with (proto.AgentWindow; without it, proto.StreamWindow).
//
// Imports: sandbox/agent/proto
package agent
