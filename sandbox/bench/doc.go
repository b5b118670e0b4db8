// Package bench measures MCP Sandbox against the docker commands people use
// today, on the real engine and through the real stdio MCP server: it
// starts an mcp-sandbox binary with its own config and state directory,
// drives it with an MCP client (sandbox/mcpclient), and runs, interleaved in one
// loop, each of our calls and its docker baseline:
//
//	warm run_code print(1)        vs  docker exec C python3 -c 'print(1)'
//	sandbox_create (warm pool)    vs  docker run -d IMAGE sleep …
//	one-shot run_code print(1)    vs  docker run --rm IMAGE python3 -c 'print(1)'
//
// The allowlist rows fetch 100 MB, and a two-byte page for the time to
// first byte, from a host server on 127.0.0.2: with Python's urllib inside
// an allowlist sandbox whose one entry names it (through the agent's proxy
// and the server's netproxy), against curl on the host straight to it.
// They need curl and the address 127.0.0.2; without them they are left
// out.
//
// It reports medians, 95th percentiles and the ratios, each beside its
// target; warm run_code's median split into transport, engine, agent and
// interpreter, and sandbox_exec true's into transport, engine, agent and
// the command as the agent timed it (from the server's "tool call timing"
// debug lines), with that row's floor on the machine (floor.go: a call of
// no tool, and the engine's attach stream to a resident python3 that has
// true run by a shell it started ahead); the
// server's resident memory idle (the most over the 6 s after it returned
// its free heap) and with ten sandboxes open; tools/list's size as sent;
// and whether twenty concurrent one-shot run_code calls all succeed. Last, it runs the red team's floods
// of issue 31 (Options.Floods; `bench --flood-mib`) against the server —
// 12 parallel 16 MiB read_file calls, a figure flood, endless output, 300
// trickled HTTP bodies without a token to a second, HTTP server of the same
// build, 50 stalled preview readers — each with the server's peak resident
// memory (VmHWM after a reset through clear_refs, and sampled VmRSS) beside
// its bound, and a real client's time meanwhile. It reports; it never fails
// on a ratio or a peak.
//
// Run it with `mcp-sandbox bench`, or from the repository with
//
//	go test ./sandbox/bench -run '^$' -bench . -benchtime 20x
//
// (MCP_SANDBOX_BENCH_OUT names the file the table is also written to).
//
//	h, err := bench.Start(ctx, bench.Options{Server: "/usr/bin/mcp-sandbox", Image: "python:3.12-slim-bookworm"})
//	for i := 0; i < 20; i++ {
//		err = h.Round(ctx)
//	}
//	rep, err := h.Finish(ctx)
//	rep.WriteText(os.Stdout)
//	h.Close()
//
// Imports: sandbox/dockerhost, sandbox/kubernetes, sandbox/mcpclient, sandbox/netproxy
package bench
