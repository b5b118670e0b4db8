package clientconfig

// LM Studio reads MCP servers from ~/.lmstudio/mcp.json, in Cursor's format.
var lmStudio = &Client{
	name:    "lmstudio",
	display: "LM Studio",
	format:  jsonFormat{key: "mcpServers", indent: "  "},
	path: func(e Env) (string, error) {
		return e.fromHome(".lmstudio", "mcp.json")
	},
	signs: func(e Env) []string {
		dir, _ := e.fromHome(".lmstudio")
		signs := append([]string{dir}, e.macApps("LM Studio.app")...)
		return append(signs, e.winPrograms("LM Studio")...)
	},
	commands: []string{"lms"},
}
