// Package icons gives the tray its icons as Fyne resources, from the
// single set of drawings in assets/: the application icon and, for the
// tray, the same with a badge whose colour says the service's state (on
// macOS, a monochrome template image for the menu bar).
//
// Imports: assets
package icons
