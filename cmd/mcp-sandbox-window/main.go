// Command mcp-sandbox-window is the MCP Sandbox window: the Status,
// Sandboxes, Clients, Settings and Activity tabs. The tray
// (mcp-sandbox-tray) starts it on "Open MCP Sandbox" and on a second
// launch; it exits when the window is closed.
//
//	mcp-sandbox-window [--confirm-pause] [--debug]
//
// All of it lives in app/windowapp; this file only hands over the command
// line, on the main goroutine, which Fyne needs.
package main

import (
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/windowapp"
)

func main() {
	os.Exit(windowapp.Main(os.Args[1:]))
}
