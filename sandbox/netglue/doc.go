// Package netglue is what sits between the engine and sandbox/netproxy for
// an allowlist sandbox: its proxy for the sandbox's life (served on
// whichever listen carries it, started on the sandbox's command agent), an
// install helper's proxy, the proxy's address and environment inside
// a sandbox, the entries an install helper's proxy allows and the hosts it
// reached, the bounded audit lines and log of each sandbox's connections,
// which allow_domains the config does not cover and whether a question
// to a person may hold them, and a proxy's traffic summary for the state
// record. The engine keeps which sandbox, its entries and the policy errors.
//
// Imports: sandbox/netproxy, sandbox/printable, sandbox/state
package netglue
