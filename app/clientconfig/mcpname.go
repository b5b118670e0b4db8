package clientconfig

import "strings"

// mcpNames maps what AI clients call themselves in the MCP handshake
// (clientInfo.name, lower-cased) to the client they are, so the window
// shows "Claude Desktop" where a sandbox's label says "claude-ai".
var mcpNames = map[string]string{
	"claude-ai":             "claude",
	"claude-desktop":        "claude",
	"cursor-vscode":         "cursor",
	"cursor":                "cursor",
	"visual studio code":    "vscode",
	"visual-studio-code":    "vscode",
	"vscode":                "vscode",
	"windsurf":              "windsurf",
	"windsurf-client":       "windsurf",
	"claude-code":           "claude-code",
	"gemini-cli":            "gemini",
	"gemini-cli-mcp-client": "gemini",
	"lm studio":             "lmstudio",
	"lm-studio":             "lmstudio",
	"lmstudio":              "lmstudio",
	"zed":                   "zed",
	"codex":                 "codex",
	"codex-mcp-client":      "codex",
}

// DisplayForMCPName is the name a person knows for the AI client that
// called itself mcpName in the MCP handshake ("Claude Desktop" for
// "claude-ai"), or mcpName itself for a client this package does not
// know (by its exact name: a longer name says more than a guess would).
func DisplayForMCPName(mcpName string) string {
	key, ok := mcpNames[strings.ToLower(strings.TrimSpace(mcpName))]
	if !ok {
		return mcpName
	}
	c, err := Lookup(key)
	if err != nil {
		return mcpName
	}
	return c.DisplayName()
}
