// Package mcpserver is the MCP face of the sandbox engine: the tools
// (sandbox_create, sandbox_exec, run_code, …) and the sandbox://{id}/logs
// resource, built with mcp-go, and the transports that serve them (stdio
// with ordered progress, streamable HTTP).
//
//	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: "1.0.0"})
//	err := srv.ServeStdio(ctx, os.Stdin, os.Stdout)
//
// Imports: sandbox, sandbox/backend, sandbox/config, sandbox/install, sandbox/inventory, sandbox/netglue, sandbox/netproxy, sandbox/output, sandbox/preview, sandbox/printable, sandbox/proposal, sandbox/state
package mcpserver
