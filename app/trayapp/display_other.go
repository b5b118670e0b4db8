//go:build !linux

package trayapp

// noDisplayOS elsewhere: macOS and Windows always have their desktop.
func noDisplayOS(func(string) string) string { return "" }
