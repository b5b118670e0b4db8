package mcpserver_test

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Attacks on the server through the sandbox's command agent and the
// server's own processes in the sandbox, made from inside the sandbox with
// nothing but tool calls. The agent and the file tools' tar run as the
// sandbox user, so the sandbox's code can stop them (SIGSTOP), kill them
// or take their place; the server must still answer every call in bounded
// time with a clear error.

// stopAgent has the sandbox stop its own command agent (the parent of the
// command's shell) a moment after the command has answered.
func stopAgent(t *testing.T, sess *mcp.ClientSession, id string) {
	t.Helper()
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": `a=$PPID; case "$(readlink /proc/$a/exe)" in *mcp-sandbox-agent*) ;; *) echo "parent is not the agent: $(readlink /proc/$a/exe)"; exit 3;; esac; ` +
		`(sleep 1; kill -STOP $a) </dev/null >/dev/null 2>&1 & echo stopping $a`})
	mustOK(t, res, "sandbox_exec")
	var got execOut
	structured(t, res, &got)
	if got.ExitCode != 0 {
		t.Fatalf("could not find the agent: %+v", got)
	}
	time.Sleep(2 * time.Second)
}

// timedCall calls a tool and fails the test if the call takes longer than
// limit (the server must not hang); it returns the result, or nil when the
// call failed at the protocol level.
func timedCall(t *testing.T, sess *mcp.ClientSession, limit time.Duration, name string, args map[string]any) (*mcp.CallToolResult, time.Duration) {
	t.Helper()
	start := time.Now()
	res, err := sess.CallTool(testContext(t, limit), &mcp.CallToolParams{Name: name, Arguments: args})
	took := time.Since(start)
	if err != nil {
		t.Fatalf("%s did not answer within %s: %v", name, limit, err)
	}
	return res, took
}

// The sandbox stops its command agent with SIGSTOP. Before the fix a
// write_file of a few MB hung for ever (the server blocked writing the
// command's stdin to an agent that no longer read it, holding the lock
// every later frame needs, sandbox_stop's included) and read_file hung
// for ever (the server's tar never answered, and the file tools had no
// timeout). Now each call fails within the exec timeout (plus the grace
// a kill is given), the stopped agent is dropped, and the next command
// runs in a fresh one.
func TestAttackStoppedAgent(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	h := newFenceHome(t)
	sess := startFenceServer(t, h, "[limits]\nexec_timeout_seconds = 3\n")
	id := createWith(t, sess, nil)
	mustOK(t, call(t, sess, "write_file", map[string]any{"sandbox_id": id, "path": "small.txt", "content": "small"}), "write_file")
	// A bound generous enough for a slow engine, far below "for ever".
	const limit = 60 * time.Second

	stopAgent(t, sess, id)
	content := base64.StdEncoding.EncodeToString([]byte(strings.Repeat("x", 6<<20)))
	res, took := timedCall(t, sess, limit, "write_file", map[string]any{"sandbox_id": id, "path": "big.txt", "content": content, "encoding": "base64"})
	if !res.IsError {
		t.Errorf("write_file to a stopped agent succeeded: %s", text(res))
	}
	t.Logf("write_file with a stopped agent: %s after %s", clipText(text(res)), took)

	stopAgent(t, sess, id)
	res, took = timedCall(t, sess, limit, "read_file", map[string]any{"sandbox_id": id, "path": "small.txt"})
	if !res.IsError {
		t.Errorf("read_file through a stopped agent succeeded: %s", text(res))
	}
	t.Logf("read_file with a stopped agent: %s after %s", clipText(text(res)), took)

	res, took = timedCall(t, sess, limit, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo alive"})
	mustOK(t, res, "sandbox_exec after the attack")
	if !strings.Contains(text(res), "alive") {
		t.Errorf("the sandbox does not run commands after its agent was stopped: %s", text(res))
	}
	t.Logf("sandbox_exec afterwards: %s", took)

	// A stop while a write is blocked on the stopped agent returns at once.
	stopAgent(t, sess, id)
	done := make(chan struct{})
	go func() {
		defer close(done)
		sess.CallTool(testContext(t, limit), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"sandbox_id": id, "path": "big2.txt", "content": content, "encoding": "base64"}})
	}()
	time.Sleep(500 * time.Millisecond)
	res, took = timedCall(t, sess, limit, "sandbox_stop", map[string]any{"sandbox_id": id})
	mustOK(t, res, "sandbox_stop")
	<-done
	t.Logf("sandbox_stop during a blocked write: %s", took)
	h.check(t)
}

func clipText(s string) string {
	if len(s) > 300 {
		return s[:300] + "…"
	}
	return s
}
