package clientconfig

// Claude Code keeps user-scope MCP servers in ~/.claude.json, a large file
// it rewrites often with much else in it; only our entry is touched. Its
// home directory always exists, so the sign of an install is ~/.claude or
// the claude command, not the directory of the file.
var claudeCode = &Client{
	name:    "claude-code",
	display: "Claude Code",
	format:  jsonFormat{key: "mcpServers", fixed: []field{{"type", "stdio"}}, indent: "  "},
	path: func(e Env) (string, error) {
		return e.fromHome(".claude.json")
	},
	signs: func(e Env) []string {
		dir, _ := e.fromHome(".claude")
		return []string{dir}
	},
	commands: []string{"claude"},
}
