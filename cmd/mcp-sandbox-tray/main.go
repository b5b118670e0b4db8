// Command mcp-sandbox-tray is the MCP Sandbox tray application: a tray icon
// and a small window that show which Docker engine is used, the sandboxes
// that run with their limits and live usage, set up AI clients, edit the
// settings and show the activity log. It bundles and spawns mcp-sandbox.
//
//	mcp-sandbox-tray [--hidden] [--debug]
//
// All of it lives in app/trayapp; this file only hands over the command
// line, on the main goroutine, which Fyne needs.
package main

import (
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/app/trayapp"
)

func main() {
	os.Exit(trayapp.Main(os.Args[1:]))
}
