// Package cli implements the mcp-sandbox command line: the MCP server
// (serve) and the commands a person runs in a terminal (doctor, clients, ps,
// stop, run, version).
//
// It lives under app/ because it wires the engine (sandbox/...) to the
// client-configuration code (app/clientconfig); it never imports Fyne, so the
// server binary stays pure Go.
//
// Imports: app/applog, app/clientconfig, app/installplace, app/internal/backendrpc, app/internal/health, app/internal/kubeconn, sandbox, sandbox/backend, sandbox/bench, sandbox/buildinfo, sandbox/config, sandbox/docker, sandbox/dockerhost, sandbox/hostcopy, sandbox/interp, sandbox/inventory, sandbox/kubernetes, sandbox/printable, sandbox/server, sandbox/state
package cli
