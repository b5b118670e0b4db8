// Package preview is the host's side of sandbox_expose: for each exposed
// port of a sandbox, a listener on the host's loopback whose connections
// are carried into the sandbox (over its command agent's streams, through
// the dial the engine passes in), the Host check that refuses DNS
// rebinding, the cut of a reader that stands still (agentconn.StallLimit),
// the bound on ports per sandbox, the record of what is exposed
// (state.Preview), and the closing of a preview whose program no longer
// listens. The engine keeps the policy: which sandbox, whether its agent
// can carry previews, and the sandbox's lifetime (closing its Set).
//
// Imports: sandbox/agentconn, sandbox/state
package preview
