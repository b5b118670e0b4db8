//go:build !linux

package traywin

// noDisplayOS elsewhere: macOS and Windows always have their desktop.
func noDisplayOS(func(string) string) string { return "" }
