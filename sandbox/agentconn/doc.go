// Package agentconn is the server's side of the command agent's protocol
// (package agent): it starts the agent in a sandbox (the engine's
// architecture, the image's cat and chmod, the copy), keeps a sandbox's
// slot for it (running, given up and why), and owns the connection to it — framing, the calls (commands, file requests), the
// byte streams into the sandbox with their credit and stalled-reader cut,
// and the listeners on the sandbox's loopback. Everything the agent says is
// treated as hostile: frames, output and answers are bounded and checked
// (its file errors are worded here), and a frame that breaks the protocol
// ends the connection.
//
// Which sandbox gets an agent, when it is started or given up, and what its
// death means are the engine's (package sandbox).
//
// Imports: sandbox/agent, sandbox/backend, sandbox/runner
package agentconn
