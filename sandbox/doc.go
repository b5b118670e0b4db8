// Package sandbox is the engine of MCP Sandbox: it turns a request such as
// "run this Python" into a disposable, hardened container, runs commands in
// it with timeouts and capped output, and removes it again.
//
// The engine reaches containers only through the small [Backend] interface,
// whose contract lives in sandbox/backend (aliased here); the Docker
// implementation lives in sandbox/docker. Policy
// (which images, which limits) comes from sandbox/config, and what the
// engine records for the tray lives in sandbox/state.
//
//	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: watcher})
//	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
//	res, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "python3 -c 'print(1)'"}, nil)
//	fmt.Print(res.Stdout) // 1
//	eng.Close(ctx)        // removes every sandbox this engine made
package sandbox
