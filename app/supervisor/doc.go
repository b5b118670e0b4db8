// Package supervisor keeps a child process running: it starts it, restarts
// it with exponential back-off when it exits, and stops it (SIGTERM, then
// kill) when told to. The tray uses it for its own
// `mcp-sandbox serve --http` child, for clients that connect by URL.
//
//	s := supervisor.New(supervisor.Options{Command: bin, Args: []string{"serve", "--http", addr}})
//	go s.Run(ctx) // cancel ctx to stop the child
//	fmt.Println(s.Status().State)
//
// Imports: app/internal/childproc
package supervisor
