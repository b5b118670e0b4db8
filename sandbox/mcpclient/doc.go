// Package mcpclient runs an MCP server as a child process and talks to it
// over its stdin and stdout, as an AI client does. It is the one MCP client
// the shipped programs link (`clients verify`, the tray's Test, `bench`),
// built on the same library as the server (github.com/mark3labs/mcp-go), so
// the binaries carry a single MCP stack.
//
//	cmd := exec.Command(path, "serve")
//	s, err := mcpclient.Start(ctx, cmd, mcpclient.Options{Name: "verify"})
//	…
//	tools, err := s.ListTools(ctx)
//	res, err := s.CallTool(ctx, "run_code", args)
//	err = s.Close()
//
// Beyond what the library does, a Session owns the process: Close ends its
// stdin, gives it time to clean up, then terminates and finally kills it,
// and the process has been waited for when Close returns. A line on stdout
// that is not JSON ends the session with ErrNotJSONRPC, the way a client
// would give up on such a server, instead of being skipped.
//
// Imports: none
package mcpclient
