//go:build race

package trayapp

// raceDetector is set when the tests run under -race. fyne.io/systray
// v1.12.2 has a data race of its own in its D-Bus menu (GetLayout reads
// menuVersion under menuLock while the refresh it starts writes it under
// another lock), which the detector reports as soon as a tray host reads
// the menu. The in-process GUI tests therefore run without -race; the
// README's test command runs this package a second time that way.
const raceDetector = true
