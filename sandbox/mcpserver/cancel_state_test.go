package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// A run_code cancelled mid-way (the client's notifications/cancelled)
// kills the interpreter, and the cancelled call's result, which would
// have said state_lost, never reaches the client. Before the fix the next
// result did not say it either, although the variables were gone; now the
// next run_code on that sandbox says state_lost, and the one after does
// not.
func TestCancelledRunCodeStateLostOverMCP(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	started := make(chan struct{}, 1)
	p := startServer(t, serverEnv(t, "[limits]\nmax_sandboxes = 1000\n"))
	sess := sdkClient(t, p, func(n *mcp.ProgressNotificationParams) {
		if strings.Contains(n.Message, "started") {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	id := createWith(t, sess, map[string]any{"language": "python"})
	mustOK(t, call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": "x = 41"}), "run_code")

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	params := &mcp.CallToolParams{Name: "run_code", Arguments: map[string]any{"sandbox_id": id, "code": "import time\nprint('started', flush=True)\ntime.sleep(120)"}}
	params.SetProgressToken("cancel-me")
	done := make(chan error, 1)
	go func() {
		_, err := sess.CallTool(ctx, params)
		done <- err
	}()
	select {
	case <-started:
	case <-time.After(time.Minute):
		t.Fatal("the long run never started")
	}
	cancel() // the SDK sends notifications/cancelled
	if err := <-done; err == nil {
		t.Fatal("the cancelled call answered")
	}

	type runOut struct {
		ExitCode  int  `json:"exit_code"`
		StateLost bool `json:"state_lost"`
	}
	for i, want := range []bool{true, false} {
		res := call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": "x = globals().get('x', 0) + 1\nx"})
		var got runOut
		structured(t, res, &got)
		if got.StateLost != want {
			t.Errorf("run %d after the cancelled one: state_lost %v, want %v: %s", i+1, got.StateLost, want, text(res))
		}
	}
}
