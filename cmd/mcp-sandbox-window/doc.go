//go:build cgo

// Command mcp-sandbox-window is the MCP Sandbox window: the Status,
// Sandboxes, Clients, Settings and Activity tabs. The tray
// (mcp-sandbox-tray) starts it on "Open MCP Sandbox" and on a second
// launch; it exits when the window is closed.
//
//	mcp-sandbox-window [--confirm-pause] [--debug]
//
// All of it lives in app/windowapp; this file only hands over the command
// line, on the main goroutine, which Fyne needs.
//
// Fyne's GL driver needs cgo, so every file of this command says
// //go:build cgo: a build without cgo (the fast test layer,
// CGO_ENABLED=0 go test ./...) leaves it out instead of failing.
//
// Imports: app/windowapp
package main
