package trayapp

// trayHost says whether the tray icon can be shown.
type trayHost struct {
	// Bus is set when a session bus answered (always on macOS and
	// Windows, which need none).
	Bus bool
	// Watcher is set when something shows tray icons.
	Watcher bool
	Why     string
}
