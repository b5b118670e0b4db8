// Package autostart starts the tray at login: an XDG autostart entry on
// Linux, a LaunchAgent on macOS, the Run key on Windows. It is off until
// the user ticks the box in Settings.
//
//	err := autostart.Set(true, exe) // starts `exe --hidden` at login
//	on, err := autostart.Enabled()
//
// Imports: sandbox/atomicfile
package autostart
