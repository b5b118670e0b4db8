// Package state keeps what the tray and every server process share besides
// the config file, in the state directory (config.StateDir()): a record per
// sandbox of what changed after its creation, the pause flag, the audit
// log, and the HTTP token.
//
//	st, err := state.Open(config.StateDir())
//	if st.Paused() { ... }
//
// Imports: sandbox/atomicfile, sandbox/printable
package state
