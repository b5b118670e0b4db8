package clientconfig

import "testing"

func TestDisplayForMCPName(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"claude-ai", "Claude Desktop"},
		{"cursor-vscode", "Cursor"},
		{"Visual Studio Code", "Visual Studio Code"}, {"visual-studio-code", "Visual Studio Code"},
		{"claude-code", "Claude Code"},
		{"codex-mcp-client", "Codex CLI"},
		{"gemini-cli-mcp-client", "Gemini CLI"},
		{"Zed", "Zed"},
		{"Claude Code (beta)", "Claude Code (beta)"}, {"claude-ai (Claude Desktop 0.9.3)", "claude-ai (Claude Desktop 0.9.3)"},
		{"my-own-agent", "my-own-agent"},
		{"", ""},
	} {
		if got := DisplayForMCPName(tc.in); got != tc.want {
			t.Errorf("DisplayForMCPName(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
