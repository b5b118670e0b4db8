// Package engineconn is the tray's and the window's link to the engine,
// one implementation for both processes, reading sandboxes through the
// backend contract (List, Inspect, Usage, Remove). With backend.kind =
// "kubernetes" it follows the cluster the config names by polling it
// through the server binary (backendrpc: one child, `mcp-sandbox
// backend-serve`, so that neither process links the Kubernetes client).
// On Docker: Dial finds the engine by dockerhost's rule (the same as the
// server's and the CLI's) and checks that it answers; Loop follows the engine's sandboxes with a
// sandboxwatch model until it goes away, and looks again; StopAll removes
// this installation's sandboxes on it.
//
//	l := engineconn.New(engineconn.Options{Config: cfg, Store: st, Log: log,
//		Looked: func(ctx context.Context, l engineconn.Look) {
//			show(l.Result, l.Err) // what was found, or why nothing answered
//		},
//		Lost: func(err error) { show(nil, err) },
//	})
//	go l.Run(ctx)
//	…
//	l.Redetect() // docker.host changed: look again now
//
// Imports: app/internal/backendrpc, app/sandboxwatch, sandbox/backend, sandbox/config, sandbox/docker, sandbox/dockerhost, sandbox/inventory, sandbox/state
package engineconn
