// Command mcp-sandbox-agent is the resident process that starts commands
// inside a sandbox, so that a command costs a fork instead of an engine
// round trip. The server carries it (see package agent), copies it into
// each sandbox and runs it as the sandbox user, attached to its stdin and
// stdout; it takes orders from that stream only, and can do nothing the
// sandbox user could not do.
//
// The protocol is package agent's (its messages are package proto's, shared with the server): frames "NONCE KIND LENGTH\n" + payload;
// the nonce is the first line of stdin.
//
// Imports: sandbox/agent/proto
package main
