// Command mcp-sandbox is the MCP server that AI clients spawn (`mcp-sandbox
// serve`) and the command line around it (doctor, clients, ps, stop, run,
// version). It is pure Go: it must start on a machine with no display.
//
// Imports: app/cli
package main
