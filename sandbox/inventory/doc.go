// Package inventory is what any process (the server, `mcp-sandbox ps` and
// `stop`, the tray, the window) knows about the installation's sandboxes
// without an engine: whose a container is ([Mine]: its installation label
// equals the state directory's id), what the managed sandboxes are (from
// their labels and their servers' records: [Lister]), how one is stopped
// by id ([Stop]), and what is removed when a server is proved gone ([Reap],
// and [RemoveOwner], the watchdog's clean-up of a server that died).
//
// Not seeing an owner is never proof that it is gone: only an owner whose
// lock (state directory, servers/OWNER.lock) is free or absent is; a live
// owner's sandbox is reaped only when that owner's record says it has been
// idle for its TTL plus two minutes with no call running. Another
// installation's objects, or those without its label or owner, are never
// reaped.
// Every string read from labels and records is cleaned where it enters.
//
// Imports: sandbox/backend, sandbox/preview, sandbox/printable, sandbox/state
package inventory
