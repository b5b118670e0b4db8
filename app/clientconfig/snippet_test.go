package clientconfig

import (
	"encoding/json"
	"testing"
)

// The snippets parse as JSON and name the bundled server's absolute path
// (stdio) or the URL and token (HTTP) under our entry.
func TestSnippets(t *testing.T) {
	var stdio struct {
		MCPServers map[string]Entry `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(StdioSnippet("/opt/mcp-sandbox/mcp-sandbox")), &stdio); err != nil {
		t.Fatal(err)
	}
	if e := stdio.MCPServers[ServerName]; e.Command != "/opt/mcp-sandbox/mcp-sandbox" || len(e.Args) != 1 || e.Args[0] != "serve" {
		t.Errorf("stdio entry %+v", e)
	}
	var http struct {
		MCPServers map[string]struct {
			URL     string            `json:"url"`
			Headers map[string]string `json:"headers"`
		} `json:"mcpServers"`
	}
	if err := json.Unmarshal([]byte(HTTPSnippet("http://127.0.0.1:8765/mcp", "tok")), &http); err != nil {
		t.Fatal(err)
	}
	if e := http.MCPServers[ServerName]; e.URL != "http://127.0.0.1:8765/mcp" || e.Headers["Authorization"] != "Bearer tok" {
		t.Errorf("HTTP entry %+v", e)
	}
}
