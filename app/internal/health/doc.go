// Package health is the one rule for "can code run on this engine": the
// checks `mcp-sandbox doctor` prints and the window's Status tab shows as
// cards, each problem with its fix. It links no CLI and no GUI, so both
// import it.
//
//	h := health.Check(ctx, cli, cfg, podman)
//	if !h.OK() { … h.Problems … }
//
// Imports: sandbox/backend, sandbox/config, sandbox/docker, sandbox/interp
package health
