// Package record keeps what the engine writes for the tray and the window,
// which are other processes: each sandbox's state record and its transcript
// (what ran in it, newest entries within a byte budget). A Recorder writes
// them in the background, coalescing updates, so no call waits for an
// fsync (nor runs beside the one it asked for: a write comes at least
// 100 ms after its update), and never writes a removed sandbox's files
// again.
//
// Imports: sandbox/state
package record
