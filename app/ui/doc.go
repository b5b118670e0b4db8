// Package ui is the tray's window: six tabs (Status, Sandboxes, Clients,
// Settings, Activity, Changes) over data the caller supplies and actions the caller
// carries out. It knows nothing of Docker or files; app/trayapp wires it to
// the real things, and its tests drive it with fakes under Fyne's headless
// test driver.
//
// Every method must be called on Fyne's UI goroutine: from a background
// goroutine, wrap the call in fyne.Do. Actions the user starts (Stop, Test,
// Save, …) run on their own goroutines, and their results come back
// through fyne.Do.
//
//	w := ui.New(app, ui.Options{Actions: acts})
//	w.Show()
//	go func() { snap := ...; fyne.Do(func() { w.Sandboxes.Set(snap) }) }()
//
// Imports: app/bundled, app/clientconfig, app/internal/health, app/sandboxwatch, sandbox, sandbox/backend, sandbox/config, sandbox/dockerhost, sandbox/hostfs, sandbox/preview, sandbox/printable, sandbox/proposal, sandbox/state
package ui
