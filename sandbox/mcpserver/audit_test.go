package mcpserver_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestAuditOverHTTP: a pre-2026 client over HTTP names itself only in
// initialize; its later calls, and the sandbox it makes, still carry its
// name. The audit log holds the host paths of both copy tools and the
// names, never the values, of sandbox_create's env.
func TestAuditOverHTTP(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	home := t.TempDir()
	src := filepath.Join(home, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "in.txt"), []byte("in"), 0o644)
	out := filepath.Join(home, "out")
	const token = "audit-test-token-0123456789"
	env := append(serverEnv(t, fmt.Sprintf("[files]\nread_roots = [%q]\nwrite_root = %q\n", src, out)), "MCP_SANDBOX_TOKEN="+token)
	p := startHTTPServer(t, env, "--http", "127.0.0.1:0")

	h := http.Header{"Authorization": {"Bearer " + token}}
	status, rh, body := rawPost(t, p.url, h, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"audit-test-client","version":"1"}}}`)
	if status != http.StatusOK || rh.Get("Mcp-Session-Id") == "" {
		t.Fatalf("initialize: %d %v %s", status, rh, body)
	}
	h.Set("Mcp-Session-Id", rh.Get("Mcp-Session-Id"))
	h.Set("Mcp-Protocol-Version", "2025-06-18")
	rawPost(t, p.url, h, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	callRaw := func(id int, tool string, args string) string {
		t.Helper()
		status, _, body := rawPost(t, p.url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":%s}}`, id, tool, args))
		if status != http.StatusOK || strings.Contains(body, `"isError":true`) {
			t.Fatalf("%s: %d %s", tool, status, body)
		}
		return body
	}
	body = callRaw(2, "sandbox_create", `{"env":{"SECRET_TOKEN":"hunter2","MODE":"x"}}`)
	i := strings.Index(body, `"sandbox_id":"`)
	if i < 0 {
		t.Fatalf("no sandbox_id in %s", body)
	}
	id := body[i+len(`"sandbox_id":"`):]
	id = id[:strings.IndexByte(id, '"')]
	callRaw(3, "copy_in", fmt.Sprintf(`{"sandbox_id":%q,"host_path":%q}`, id, filepath.Join(src, "in.txt")))
	callRaw(4, "copy_out", fmt.Sprintf(`{"sandbox_id":%q,"path":"in.txt","host_path":"back/in.txt"}`, id))
	// A command killed for its time is marked so (the tray's badge).
	callRaw(5, "sandbox_exec", fmt.Sprintf(`{"sandbox_id":%q,"command":"sleep 30","timeout_seconds":1}`, id))
	// A refused call: the window's view of it shows what it answered.
	rawPost(t, p.url, h, fmt.Sprintf(`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"copy_out","arguments":{"sandbox_id":%q,"path":"in.txt","host_path":"/etc/refused.txt"}}}`, id))

	// The container's client label, which ps and the tray show.
	ins, err := cli.ContainerInspect(testContext(t, time.Minute), "mcp-sandbox-"+id)
	if err != nil {
		t.Fatal(err)
	}
	if got := ins.Config.Labels["io.mcp-sandbox.client"]; got != "audit-test-client" {
		t.Errorf("client label = %q, want audit-test-client", got)
	}
	for _, e := range ins.Config.Env {
		if strings.Contains(e, "hunter2") {
			t.Errorf("sandbox_create's env is in the container's own environment: %s", e)
		}
	}

	data, err := os.ReadFile(filepath.Join(envValue(env, "MCP_SANDBOX_STATE_DIR"), "audit.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(data), "hunter2") {
		t.Errorf("the audit log holds an env value:\n%s", data)
	}
	want := map[string][]string{
		"sandbox_create": {"SECRET_TOKEN=…", "MODE=…"},
		"copy_in":        {filepath.Join(src, "in.txt")},
		"copy_out":       {filepath.Join(out, "back", "in.txt")},
		"sandbox_exec":   {"sleep 30"},
	}
	refused := false
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var e struct {
			Tool, Client, Summary string
			TimedOut              bool `json:"timed_out"`
			Error                 bool
			ErrorText             string `json:"error_text"`
		}
		json.Unmarshal([]byte(line), &e)
		if e.Error {
			refused = e.Tool == "copy_out" && strings.Contains(e.ErrorText, "write_root")
			if !refused {
				t.Errorf("a failed %s call's error_text %q does not say why", e.Tool, e.ErrorText)
			}
			continue
		}
		if e.TimedOut != (e.Tool == "sandbox_exec") {
			t.Errorf("%s: timed_out %v", e.Tool, e.TimedOut)
		}
		if e.Client != "audit-test-client" {
			t.Errorf("%s: client %q, want audit-test-client", e.Tool, e.Client)
		}
		for _, s := range want[e.Tool] {
			if !strings.Contains(e.Summary, s) {
				t.Errorf("%s: summary %q lacks %q", e.Tool, e.Summary, s)
			}
		}
		delete(want, e.Tool)
	}
	if len(want) > 0 {
		t.Errorf("no audit entries for %v", want)
	}
	if !refused {
		t.Errorf("no audit entry for the refused copy_out:\n%s", data)
	}
}
