//go:build !linux

package trayapp

// probeTrayHost: macOS and Windows always have a menu bar or notification
// area, and need no bus.
func probeTrayHost() trayHost {
	return trayHost{Bus: true, Watcher: true, Why: "the system's own tray"}
}
