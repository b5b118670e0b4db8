// Package app is the desktop side of MCP Sandbox: the Fyne tray and window
// (app/trayapp, app/ui, app/traymenu), what they run on (app/sandboxwatch,
// app/supervisor, app/bundled, app/instance, app/autostart, app/firstrun,
// app/installplace), and the code shared with the command line (app/cli,
// app/clientconfig).
//
// Only this tree imports Fyne, and only the tray binary links it: the
// server, cmd/mcp-sandbox, stays pure Go so an AI client can start it on a
// machine with no display. deps_test.go holds both lines.
//
// Imports: none
package app
