// Package sandbox is the engine of MCP Sandbox: it turns a request such as
// "run this Python" into a disposable, hardened container, runs commands in
// it with timeouts and capped output, and removes it again.
//
// The engine reaches containers only through the small [Backend] interface,
// whose contract lives in sandbox/backend (aliased here); the Docker
// implementation lives in sandbox/docker. Policy
// (which images, which limits) comes from sandbox/config, and what the
// engine records for the tray lives in sandbox/state, written in the
// background by sandbox/record. The host's side of
// copy_in and copy_out (the file fence, the tar streams) is sandbox/hostcopy;
// the sandbox's side of the file tools (paths resolved in it, its tar,
// reads, listings) is sandbox/sbfiles.
// The server's side of
// the command agent's protocol (its start, its slot, framing, commands, file
// requests, streams and listeners) is sandbox/agentconn; the engine decides when a sandbox's
// agent starts, when it is given up, and what its death means.
//
//	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: watcher})
//	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
//	res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "python3 -c 'print(1)'"})
//	fmt.Print(res.Stdout) // 1
//	eng.Close(ctx)        // removes every sandbox this engine made
//
// Its operations take a request struct and return a result struct
// (CopyIn(ctx, id, CopyInRequest) (CopyInResult, error), as moby's client
// does), so a new option or field changes no caller; whether a sandbox's
// container died under a call is decided in death.go alone. run_code's
// sessions (resident interpreters, figures, bash state) live in
// sandbox/interp, which reaches the engine through interp.Host.
//
// The warm pool's logic (sizes, refill, bursts, claims, draining) lives in
// sandbox/pool; pool.go here is what it asks of the engine.
// What sits between the engine and sandbox/netproxy (the proxy's address
// and environment, its start on the agent, install helpers' proxies, the
// audit lines and log of a sandbox's connections) lives in sandbox/netglue. Previews (sandbox_expose:
// a host listener per port, carried over the agent's streams) live in
// sandbox/preview; expose.go here keeps their policy. install_packages
// (names, helper, collect step, failure notes) lives in sandbox/install; the
// engine checks the policy, holds the install lock and starts the helper's
// agent.
//
// # Bounded by construction
//
// Every reader of sandbox output counts bytes against a limit before it
// buffers: interpreter frames other than figures announce at most
// runner.MaxPayload (1 MiB); a figure is kept only when its run has room
// (16, limits.image_bytes in all) and the server-wide figure budget (four
// runs' worth of limits.image_bytes, at least 16 MiB) has its bytes, else
// it is read past and the result says truncated; output is cut to
// limits.output_bytes per stream as it arrives; listings stop at 5000
// entries and 2 MiB of names; copy_out keeps at most 4 MiB of link names;
// the server's own probes keep a few KiB of what they print. The output
// cap, output files and the memory budget live in sandbox/output; the
// figure budget in sandbox/interp.
//
// # Owners and reaping
//
// Whose an object is, the reaping rules and what any process lists or
// stops without an engine live in sandbox/inventory; a server applies
// them on start ([Engine.Reap]): only its installation's objects, and
// only with proof that their owner is gone. [OpenPeer] lets the window
// list and save the files of a sandbox another server of the installation
// owns, with no agent started and the owner's transcript untouched.
//
// Imports: sandbox/agent, sandbox/agentconn, sandbox/backend, sandbox/config, sandbox/hostcopy, sandbox/hostfs, sandbox/install, sandbox/interp, sandbox/inventory, sandbox/netglue, sandbox/netproxy, sandbox/output, sandbox/pool, sandbox/preview, sandbox/printable, sandbox/proposal, sandbox/record, sandbox/runner, sandbox/sbfiles, sandbox/state
package sandbox
