package clientconfig

// VS Code reads user-level MCP servers from mcp.json in its User directory,
// under "servers" (not "mcpServers"), each with a "type". It writes that
// file with tabs, so a file we create does too.
var vscode = &Client{
	name:    "vscode",
	display: "Visual Studio Code",
	format:  jsonFormat{key: "servers", fixed: []field{{"type", "stdio"}}, indent: "\t"},
	path: func(e Env) (string, error) {
		dir, err := vscodeDir(e)
		if err != nil {
			return "", err
		}
		return e.join(dir, "User", "mcp.json"), nil
	},
	signs: func(e Env) []string {
		dir, _ := vscodeDir(e)
		signs := append([]string{dir}, e.macApps("Visual Studio Code.app")...)
		return append(signs, e.winPrograms("Microsoft VS Code")...)
	},
	commands: []string{"code"},
}

// vscodeDir is VS Code's per-user data directory, "Code" in the platform's
// user config directory.
func vscodeDir(e Env) (string, error) {
	dir, err := e.userConfigDir()
	if err != nil {
		return "", err
	}
	return e.join(dir, "Code"), nil
}
