package mcpserver_test

import (
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestOutputAffordableOverMCP is the check on the built server:
// seq 1 200000 through sandbox_exec, and through run_code in a sandbox,
// returns at most 24 KB in all, the output once, and output_file in
// structuredContent holds the whole output, which sandbox_exec and
// read_file read back.
func TestOutputAffordableOverMCP(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"sandbox_exec", map[string]any{"sandbox_id": id, "command": "seq 1 200000"}},
		{"run_code", map[string]any{"sandbox_id": id, "code": "for i in range(1, 200001):\n    print(i)"}},
	} {
		file := checkAffordable(t, tc.tool, call(t, sess, tc.tool, tc.args))
		if file == "" {
			continue
		}
		res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "wc -l < " + file + "; sed -n 123457p " + file})
		var got execOut
		structured(t, res, &got)
		if got.Stdout != "200000\n123457\n" {
			t.Errorf("%s: %s holds %q (lines, line 123457), want the whole output", tc.tool, file, got.Stdout)
		}
		// Line 100000 starts at byte 588888 of seq 1 200000's output.
		res = call(t, sess, "read_file", map[string]any{"sandbox_id": id, "path": file, "offset": 588888, "max_bytes": 13})
		if txt := text(res); res.IsError || !strings.HasPrefix(txt, "100000\n100001") {
			t.Errorf("%s: read_file of %s at line 100000: %s", tc.tool, file, txt)
		}
	}
}
