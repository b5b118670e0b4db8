// Command mcp-sandbox-tray is the MCP Sandbox tray: a status icon and
// menu that runs all day at next to no cost, sets up AI clients, notifies,
// supervises the HTTP server and opens the window (mcp-sandbox-window, a
// separate process) when asked. It bundles and spawns mcp-sandbox.
//
//	mcp-sandbox-tray [--hidden] [--debug]
//
// All of it lives in app/trayapp; this file only hands over the command
// line, on the main goroutine, which macOS's menu bar needs.
//
// Imports: app/trayapp
package main
