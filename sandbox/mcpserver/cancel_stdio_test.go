package mcpserver_test

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestCancelNoResponseOverStdio: the built server, spoken to line by line
// over stdio. A run_code cancelled with notifications/cancelled while it
// runs gets no response; the next run_code in the same sandbox, which
// waits for the cancelled one to end, is answered, so by then the
// cancelled one's response would have been written before it.
func TestCancelNoResponseOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	go io.Copy(io.Discard, p.stdout)
	send := func(line string) {
		t.Helper()
		if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	// waitFor waits for a message with id (or, for "", a progress message
	// saying word) and returns its result.
	waitFor := func(id, word string) string {
		t.Helper()
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			for _, m := range p.wire.messages(t) {
				if id != "" && string(m.ID) == id && m.Method == "" || id == "" && strings.Contains(m.Params.Message, word) {
					return string(m.Result)
				}
			}
		}
		t.Fatalf("no message %s %s; the server wrote %d lines", id, word, len(p.wire.messages(t)))
		return ""
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	waitFor("1", "")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox_create","arguments":{"language":"python"}}}`)
	created := waitFor("2", "")
	i := strings.Index(created, `"sandbox_id":"`)
	if i < 0 {
		t.Fatalf("sandbox_create: %s", created)
	}
	id := strings.SplitN(created[i+len(`"sandbox_id":"`):], `"`, 2)[0]
	run := func(reqID int, code string) {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_code","arguments":{"sandbox_id":%q,"code":%q},"_meta":{"progressToken":"t%d"}}}`, reqID, id, code, reqID))
	}
	run(3, "import time\nprint('started', flush=True)\ntime.sleep(120)")
	waitFor("", "started")
	send(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3,"reason":"test"}}`)
	run(4, "print(6*7)")
	if got := waitFor("4", ""); !strings.Contains(got, "42") {
		t.Errorf("the run after the cancelled one: %s", got)
	}
	for _, m := range p.wire.messages(t) {
		if string(m.ID) == "3" {
			t.Errorf("the cancelled run_code was answered: %s", m.Result)
		}
	}
}
