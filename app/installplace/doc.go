// Package installplace tells whether the app runs from a place it will
// not stay in: on macOS, a mounted disk image (/Volumes/…, read-only) or an
// App Translocation copy (a read-only copy macOS makes of a quarantined
// app that was not moved with the Finder). Config files written from
// there would point AI clients at a path that vanishes, so the tray writes
// none and offers to move itself to /Applications, as Ollama does.
//
//	if p := installplace.Here(exe); p.Transient() {
//		ask(p.Message()) // then installplace.MoveToApplications(p) and Relaunch
//	}
//
// Imports: none
package installplace
