// Package backendrpc lets the tray and the window read a Kubernetes
// cluster without linking its client (client-go): the server binary,
// which links it, runs as one long-lived child (`mcp-sandbox
// backend-serve`, Serve) and answers the backend contract's calls the
// tray and the window make (List, Inspect, Usage, Remove, and what a
// sandbox's details need) as JSON lines on its stdin and stdout. The
// child ends when its stdin ends, so it never outlives the process that
// started it; its stderr goes to that process's log.
//
//	c, err := backendrpc.Start(serverPath, log)
//	place, err := c.Open(ctx, cfg.Kubernetes) // the cluster the config names
//	list, err := c.List(ctx)
//	…
//	c.Close()
//
// Imports: app/internal/childproc, sandbox/backend, sandbox/config
package backendrpc
