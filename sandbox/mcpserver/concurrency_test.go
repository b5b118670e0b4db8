package mcpserver_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestSixteenCallsAtOnce proves the server runs at least 16 tool calls at
// the same time, without timing anything: each call waits inside the
// sandbox until all 16 have started, so if the server ran fewer at once,
// the calls would time out instead of finishing.
func TestSixteenCallsAtOnce(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	id := createSandboxes(t, sess, 1)[0]
	const n = 16
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A glob, not ls: gVisor refuses the statx that ls makes.
			cmd := fmt.Sprintf(`touch /tmp/started-%d; while set -- /tmp/started-*; [ $# -lt %d ]; do sleep 0.05; done; echo all-started`, i, n)
			res, err := sess.CallTool(testContext(t, 2*time.Minute), &mcp.CallToolParams{Name: "sandbox_exec", Arguments: map[string]any{
				"sandbox_id": id, "command": cmd, "timeout_seconds": 60,
			}})
			if err != nil {
				t.Errorf("call %d: %v", i, err)
				return
			}
			var ex execOut
			structured(t, res, &ex)
			if res.IsError || ex.TimedOut || ex.Stdout != "all-started\n" {
				t.Errorf("call %d did not see all %d running at once: %+v %s", i, n, ex, text(res))
			}
		}()
	}
	wg.Wait()
}
