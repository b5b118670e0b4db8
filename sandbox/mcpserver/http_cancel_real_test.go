package mcpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestCancelNoResponseOverHTTP: the built server over streamable HTTP, a
// 2025-11-25 client spoken to raw. A run_code its session cancels with
// notifications/cancelled gets no response on its stream, and the sandbox
// goes on serving the session.
func TestCancelNoResponseOverHTTP(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startHTTPServer(t, append(serverEnv(t, ""), "MCP_SANDBOX_TOKEN="+httpToken), "--http", "127.0.0.1:0")
	send := func(sid, body string) (string, string) {
		t.Helper()
		resp := post(t, p.url, httpToken, sid, body)
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.Header.Get("Mcp-Session-Id"), string(b)
	}
	sid, _ := send("", sessionInit)
	if sid == "" {
		t.Fatal("initialize gave no session id")
	}
	send(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, created := send(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"sandbox_create","arguments":{"language":"python"}}}`)
	i := strings.Index(created, `"sandbox_id":"`)
	if i < 0 {
		t.Fatalf("sandbox_create: %s", created)
	}
	id := strings.SplitN(created[i+len(`"sandbox_id":"`):], `"`, 2)[0]
	runBody := func(reqID int, code string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"run_code","arguments":{"sandbox_id":%q,"code":%q},"_meta":{"progressToken":"t%d"}}}`, reqID, id, code, reqID)
	}

	rest := openCall(t, p.url, httpToken, sid, runBody(3, "import time\nprint('started', flush=True)\ntime.sleep(120)"), "started")
	resp := post(t, p.url, httpToken, sid, cancelBody(3))
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("the cancellation: %d, want 202", resp.StatusCode)
	}
	if got := rest(); strings.Contains(got, `"id":3`) {
		t.Errorf("the cancelled run_code was answered: %q", got)
	}
	if _, got := send(sid, runBody(4, "print(6*7)")); !strings.Contains(got, "42") {
		t.Errorf("the run after the cancelled one: %q", got)
	}
}
