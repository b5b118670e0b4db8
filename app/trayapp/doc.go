// Package trayapp is the MCP Sandbox tray: the idle process that runs all
// day. It shows a status icon and menu (fyne.io/systray directly: no GUI
// toolkit, no GL, no window), sets up AI clients on first run, sends
// desktop notifications, follows the Docker engine by its events stream,
// keeps to one instance per user, keeps the login entry in line with the
// config, supervises the `serve --http` child, and checks for updates when
// asked to. The window (app/windowapp, the mcp-sandbox-window binary) is a
// separate process the tray starts on "Open MCP Sandbox" or on a second
// launch; it exits when closed.
//
//	func main() {
//		os.Exit(trayapp.Main(os.Args[1:]))
//	}
//
// State has one home: the Docker engine (the sandboxes), the config file
// (settings), and the state directory (the pause flag, and tray.json with
// what only the tray knows: its HTTP server and an offered update). The
// window reads those itself and writes the pause flag; the tray follows the
// state directory with fsnotify.
//
// Imports: app/autostart, app/bundled, app/clientconfig, app/firstrun, app/installplace, app/instance, app/internal/clientsetup, app/internal/dirwatch, app/internal/engineconn, app/internal/health, app/internal/startup, app/internal/traywin, app/sandboxwatch, app/supervisor, app/traymenu, app/update, assets, sandbox/config, sandbox/dockerhost, sandbox/memtrim, sandbox/netproxy, sandbox/printable, sandbox/proposal, sandbox/state
package trayapp
