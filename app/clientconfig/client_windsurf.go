package clientconfig

// Windsurf (Codeium) reads MCP servers from ~/.codeium/windsurf/mcp_config.json.
var windsurf = &Client{
	name:    "windsurf",
	display: "Windsurf",
	format:  jsonFormat{key: "mcpServers", indent: "  "},
	path: func(e Env) (string, error) {
		return e.fromHome(".codeium", "windsurf", "mcp_config.json")
	},
	signs: func(e Env) []string {
		dir, _ := e.fromHome(".codeium", "windsurf")
		signs := append([]string{dir}, e.macApps("Windsurf.app")...)
		return append(signs, e.winPrograms("Windsurf")...)
	},
	commands: []string{"windsurf"},
}
