//go:build cgo

// Package windowapp is the MCP Sandbox window: the Status, Sandboxes,
// Clients, Settings and Activity tabs (app/ui), in a process of its own
// (mcp-sandbox-window) that the tray starts on "Open MCP Sandbox" or on a
// second launch, and that exits when its window is closed, so the idle
// tray links no GUI toolkit and keeps no GL context.
//
// It reads the state where it lives: the Docker engine by the same rule
// as the tray and the servers (engineconn.Dial), the config file, the
// pause flag and the tray's tray.json in the state directory (followed
// with fsnotify). Pausing and starting write the pause flag, which the
// tray applies.
//
// Fyne's GL driver needs cgo, so every file of this package says
// //go:build cgo: a build without cgo (the fast test layer,
// CGO_ENABLED=0 go test ./...) leaves it out instead of failing.
//
// Imports: app/bundled, app/clientconfig, app/icons, app/instance, app/internal/clientsetup, app/internal/dirwatch, app/internal/engineconn, app/internal/health, app/internal/startup, app/internal/traywin, app/sandboxwatch, app/ui, sandbox, sandbox/backend, sandbox/config, sandbox/dockerhost, sandbox/hostcopy, sandbox/inventory, sandbox/memtrim, sandbox/proposal, sandbox/state
package windowapp
