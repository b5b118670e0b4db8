package mcpserver_test

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestDockerUnreachable: with no engine at the configured endpoint the
// server still starts, and every call that needs Docker is an error result
// that names the endpoint and what to do, while the server keeps serving.
func TestDockerUnreachable(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "no-docker.sock")
	p := startServer(t, serverEnv(t, "[docker]\nhost = \"unix://"+sock+"\"\n"))
	sess := sdkClient(t, p, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"sandbox_create", nil},
		{"run_code", map[string]any{"code": "print(1)"}},
		{"sandbox_create", map[string]any{"language": "javascript"}},
	} {
		res := call(t, sess, tc.tool, tc.args)
		msg := text(res)
		if !res.IsError || !strings.Contains(msg, "Docker is not reachable at unix://"+sock) || !strings.Contains(msg, "mcp-sandbox doctor") {
			t.Errorf("%s: isError=%v %q", tc.tool, res.IsError, msg)
		}
	}
	if res := call(t, sess, "sandbox_list", nil); res.IsError {
		t.Errorf("sandbox_list: %s", text(res))
	}
}
