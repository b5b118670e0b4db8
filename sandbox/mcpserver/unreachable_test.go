package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerUnreachable: with no engine at the explicitly chosen endpoint
// (the config's docker.host, or DOCKER_HOST) the server still starts, and
// every call that needs Docker is an error result that names the choice and
// what to do, while the server keeps serving. No other engine stands in:
// the machine's own engine may answer at the default socket meanwhile.
func TestDockerUnreachable(t *testing.T) {
	for _, tc := range []struct {
		name   string
		extra  func(sock string) (toml string, env []string)
		want   func(sock string) string
		wantDo string
	}{
		{
			name:   "docker.host",
			extra:  func(sock string) (string, []string) { return "[docker]\nhost = \"unix://" + sock + "\"\n", nil },
			want:   func(sock string) string { return `Docker is not reachable at docker.host = "unix://` + sock + `" (in ` },
			wantDo: "start that engine, or clear docker.host in ",
		},
		{
			name:  "DOCKER_HOST",
			extra: func(sock string) (string, []string) { return "", []string{"DOCKER_HOST=unix://" + sock} },
			want: func(sock string) string {
				return "Docker is not reachable at DOCKER_HOST=unix://" + sock + " (from the environment)"
			},
			wantDo: "start that engine, or unset DOCKER_HOST to let MCP Sandbox detect one",
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sock := filepath.Join(t.TempDir(), "no-docker.sock")
			toml, env := tc.extra(sock)
			p := startServer(t, append(serverEnv(t, toml), env...))
			sess := sdkClient(t, p, nil)
			for _, call1 := range []struct {
				tool string
				args map[string]any
			}{
				{"sandbox_create", nil},
				{"run_code", map[string]any{"code": "print(1)"}},
				{"sandbox_create", map[string]any{"language": "javascript"}},
			} {
				res := call(t, sess, call1.tool, call1.args)
				msg := text(res)
				if !res.IsError || !strings.Contains(msg, tc.want(sock)) || !strings.Contains(msg, tc.wantDo) || !strings.Contains(msg, "mcp-sandbox doctor") {
					t.Errorf("%s: isError=%v %q", call1.tool, res.IsError, msg)
				}
			}
			if res := call(t, sess, "sandbox_list", nil); res.IsError {
				t.Errorf("sandbox_list: %s", text(res))
			}
		})
	}
}
