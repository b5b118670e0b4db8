// Package clientconfig writes the MCP entry for our server, named
// "mcp-sandbox", into the config files of AI clients (Claude Desktop,
// Cursor, VS Code, Windsurf, Claude Code, Gemini CLI, LM Studio, Zed and
// Codex CLI), reports on it, removes it, and checks that the configured
// command really answers MCP.
//
// Its first rule is that a person's config file survives: only our entry
// changes; every other key, server and comment stays byte for byte, as do
// the file's mode and owner. A file that does not parse is left alone and
// the error says where it is broken. Writes skip files that would not
// change, take a lock, back the file up to <file>.<YYYYMMDD-HHMMSS>.bak,
// and replace it atomically; a symbolic link is written through, not
// replaced.
//
// Paths come from an Env rather than the running process, so a temporary
// home (or another operating system's layout) can stand in:
//
//	env := clientconfig.OSEnv()
//	c, err := clientconfig.Lookup("claude")
//	if err != nil {
//		return err // wraps clientconfig.ErrUnknownClient
//	}
//	res, err := c.Install(ctx, clientconfig.InstallOptions{
//		Env:        env,
//		Command:    "/opt/mcp-sandbox/bin/mcp-sandbox",
//		DockerHost: "unix:///var/run/docker.sock",
//	})
//	if err != nil {
//		return err // errors.Is(err, clientconfig.ErrParse) for a broken file
//	}
//	fmt.Println("wrote", res.Path, "backup", res.Backup)
//
//	st, _ := c.Status(clientconfig.StatusOptions{Env: env, Command: "/opt/mcp-sandbox/bin/mcp-sandbox"})
//	if st.Configured && !st.Matches {
//		fmt.Println("needs repair:", st.Differences)
//	}
//	v, err := c.Verify(ctx, clientconfig.VerifyOptions{Env: env})
//	if err == nil {
//		fmt.Printf("%s %s: %d tools in %v\n", v.ServerName, v.ServerVersion, v.Tools, v.RoundTrip)
//	}
//
// The package is plain Go, without Fyne, so the tray and the command line
// share it.
//
// Imports: app/internal/childproc, sandbox/atomicfile, sandbox/config, sandbox/filebackup, sandbox/mcpclient, sandbox/tomlscan
package clientconfig
