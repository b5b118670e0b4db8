package clientconfig

// Gemini CLI reads MCP servers from ~/.gemini/settings.json.
var gemini = &Client{
	name:    "gemini",
	display: "Gemini CLI",
	format:  jsonFormat{key: "mcpServers", indent: "  "},
	path: func(e Env) (string, error) {
		return e.fromHome(".gemini", "settings.json")
	},
	signs: func(e Env) []string {
		dir, _ := e.fromHome(".gemini")
		return []string{dir}
	},
	commands: []string{"gemini"},
}
