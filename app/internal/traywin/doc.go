// Package traywin holds what the tray and the window both need, so that
// neither links the other: the display check and tray.json, what the tray
// tells the window. The window binary must link no tray code (systray,
// D-Bus, the updater, autostart); app/deps_test.go checks it.
//
// Imports: none
package traywin
