package clientconfig

// Cursor reads global MCP servers from ~/.cursor/mcp.json.
var cursor = &Client{
	name:    "cursor",
	display: "Cursor",
	format:  jsonFormat{key: "mcpServers", indent: "  "},
	path: func(e Env) (string, error) {
		return e.fromHome(".cursor", "mcp.json")
	},
	signs: func(e Env) []string {
		dir, _ := e.fromHome(".cursor")
		signs := append([]string{dir}, e.macApps("Cursor.app")...)
		return append(signs, e.winPrograms("cursor")...)
	},
	commands: []string{"cursor"},
}
