package clientconfig

import "encoding/json"

// StdioSnippet is the MCP config a person pastes into a client this app
// does not configure itself: our entry under "mcpServers", running the
// bundled server at command (an absolute path) over stdio.
func StdioSnippet(command string) string {
	return snippet(wantEntry(command, ""))
}

// HTTPSnippet is the same for a client that connects by URL: the URL and
// the bearer token in an Authorization header.
func HTTPSnippet(url, token string) string {
	return snippet(map[string]any{"url": url, "headers": map[string]string{"Authorization": "Bearer " + token}})
}

func snippet(entry any) string {
	b, err := json.MarshalIndent(map[string]any{"mcpServers": map[string]any{ServerName: entry}}, "", "  ")
	if err != nil {
		return "" // maps of strings always marshal
	}
	return string(b) + "\n"
}
