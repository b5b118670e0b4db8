// Package sandboxwatch keeps the tray's picture of every managed sandbox,
// whichever server made it, up to date without polling: Docker's events
// stream (and changes to the servers' sandbox records) say when to list
// again, and live usage (CPU, memory, pids) is sampled only while someone
// looks at it. It has no GUI code, so it is tested on its own.
//
//	m := sandboxwatch.New(sandboxwatch.Options{Source: src, OnChange: show})
//	go m.Run(ctx)
//	m.SetLive(true) // the Sandboxes tab is visible: sample usage
//
// Imports: app/clientconfig, sandbox/backend, sandbox/inventory
package sandboxwatch
