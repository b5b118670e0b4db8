package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// memoryBomb grows until the memory limit is hit, in Python.
const memoryBomb = "b = []\nwhile True: b.append(bytearray(10**7))"

// TestMemoryBombOverMCP sets off a memory bomb through sandbox_exec and
// through run_code on the real binary: each call returns (it asks for a
// ten-minute timeout, so only a hang misses the one-minute deadline here)
// with exit_code 137 and oom_killed, under runc and under gVisor (where
// the whole container is killed). Afterwards the sandbox either still
// works (runc) or says it is gone and why (gVisor).
func TestMemoryBombOverMCP(t *testing.T) {
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"sandbox_exec", map[string]any{"command": "python3 -c '" + memoryBomb + "'"}},
		{"run_code", map[string]any{"code": memoryBomb}},
	} {
		t.Run(tc.tool, func(t *testing.T) {
			var created struct {
				SandboxID string `json:"sandbox_id"`
			}
			structured(t, call(t, sess, "sandbox_create", map[string]any{"language": "python", "memory_mb": 128}), &created)
			args := map[string]any{"sandbox_id": created.SandboxID, "timeout_seconds": 600}
			for k, v := range tc.args {
				args[k] = v
			}
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: args})
			if err != nil {
				t.Fatalf("%s did not return: %v\nserver log:\n%s", tc.tool, err, p.stderr.String())
			}
			var got execOut
			structured(t, res, &got)
			if res.IsError || got.ExitCode != 137 || !got.OOMKilled || got.TimedOut {
				t.Errorf("want exit_code 137 and oom_killed; got %+v (isError %v: %s)", got, res.IsError, text(res))
			}
			if !strings.Contains(text(res), "killed for memory") {
				t.Errorf("the text does not say so: %q", text(res))
			}
			after := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": created.SandboxID, "command": "echo alive"})
			var out execOut
			structured(t, after, &out)
			gone := after.IsError && strings.Contains(text(after), "no longer exists") && strings.Contains(text(after), "memory")
			if out.Stdout != "alive\n" && !gone {
				t.Errorf("after the bomb the sandbox neither works nor says it is gone: %+v %q", out, text(after))
			}
		})
	}
}
