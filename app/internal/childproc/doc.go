// Package childproc prepares the commands the tray starts (the bundled
// server, its version check, a client's configured command) so that on
// Windows no console window flashes up: the tray is a GUI program, and a
// console program it starts would otherwise get a console of its own.
//
//	cmd := exec.Command(path, "serve")
//	childproc.NoWindow(cmd)
//
// Imports: none
package childproc
