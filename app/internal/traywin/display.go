// Package traywin holds what the tray and the window both need, so that
// neither links the other: the display check and tray.json, what the tray
// tells the window. The window binary must link no tray code (systray,
// D-Bus, the updater, autostart); app/deps_test.go checks it.
package traywin

// NoDisplay says, in one line, why this session cannot show a tray or a
// window, or returns "" when it can (as far as can be told before GLFW is
// started, which panics without a display).
func NoDisplay(getenv func(string) string) string { return noDisplayOS(getenv) }
