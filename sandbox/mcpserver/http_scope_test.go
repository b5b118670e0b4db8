package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// startHTTPInProc serves the real server on the fake backend over
// streamable HTTP on a loopback port, until the test ends; it returns the
// MCP URL and the engine.
func startHTTPInProc(t *testing.T) (string, *sandbox.Engine) {
	t.Helper()
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	eng := sandbox.NewEngine(sandbox.Options{Backend: fake.New(), Config: config.Static(cfg), State: st, OwnerID: "http-owner"})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	engDone, served := make(chan struct{}), make(chan error, 1)
	go func() { defer close(engDone); eng.Run(ctx) }()
	srv := mcpserver.New(mcpserver.Options{Engine: eng, Version: "test", State: st})
	go func() { served <- srv.ServeStreamableHTTP(ctx, ln, mcpserver.HTTPOptions{Token: probeToken}) }()
	t.Cleanup(func() {
		cancel()
		if err := <-served; err != nil {
			t.Errorf("serve: %v", err)
		}
		<-engDone
		if err := eng.Close(context.Background()); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	return "http://" + ln.Addr().String() + mcpserver.HTTPPath, eng
}

var sandboxIDIn = regexp.MustCompile(`"sandbox_id":"([a-z0-9]+)"`)

// callIn calls tool with args in session id ("" with 2026-07-28: no
// session) and returns the answer's body.
func callIn(t *testing.T, url, id, tool string, args map[string]any) string {
	t.Helper()
	params := map[string]any{"name": tool, "arguments": args}
	version := "2025-11-25"
	if id == "" {
		version = "2026-07-28"
		params["_meta"] = json.RawMessage(`{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}`)
	}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": params})
	if err != nil {
		t.Fatal(err)
	}
	status, _, got := rawCall(t, url, version, id, "tools/call", string(body))
	if status != http.StatusOK {
		t.Fatalf("%s in session %q: %d %s", tool, id, status, got)
	}
	return got
}

// TestHTTPSessionsApart: two HTTP sessions with the same token are two
// clients, as two stdio servers are: neither lists, execs in, reads or
// stops the other's sandbox, `all: true` stops only the caller's, and a
// session's end (DELETE) stops its sandboxes. Requests without a session
// (2026-07-28) are one more client. Fake backend, real HTTP on loopback.
func TestHTTPSessionsApart(t *testing.T) {
	url, eng := startHTTPInProc(t)
	a, b, sb := checkSessionsApart(t, url, "bash")
	callIn(t, url, b, "sandbox_stop", map[string]any{"all": true})
	if got := live(eng); fmt.Sprint(got) != fmt.Sprint(map[string]bool{sb[0]: true, sb[2]: true}) {
		t.Errorf("after all: true in session b, live sandboxes %v, want %s and %s", got, sb[0], sb[2])
	}
	if status, _, body := rawCall(t, url, "2025-11-25", a, "", ""); status != http.StatusOK {
		t.Fatalf("DELETE session a: %d %s", status, body)
	}
	if got := live(eng); fmt.Sprint(got) != fmt.Sprint(map[string]bool{sb[2]: true}) {
		t.Errorf("after session a ended, live sandboxes %v, want only %s", got, sb[2])
	}
}

// checkSessionsApart opens sessions a and b on url, makes a sandbox of
// language in each and one without a session, and checks that none of
// the three clients lists, execs in, reads or stops another's. It returns
// the sessions and the sandboxes (a's, b's, the session-less one's).
func checkSessionsApart(t *testing.T, url, language string) (a, b string, sb [3]string) {
	t.Helper()
	session := func() string {
		status, id, body := rawSession(t, url, http.MethodPost, "", "", sessionInit)
		if status != http.StatusOK || id == "" {
			t.Fatalf("initialize: %d %q %s", status, id, body)
		}
		return id
	}
	a, b = session(), session()
	for i, in := range []string{a, b, ""} {
		m := sandboxIDIn.FindStringSubmatch(callIn(t, url, in, "sandbox_create", map[string]any{"language": language}))
		if m == nil {
			t.Fatalf("no sandbox id in sandbox_create's answer in session %q", in)
		}
		sb[i] = m[1]
	}
	for _, c := range []struct{ session, mine, other string }{{a, sb[0], sb[1]}, {b, sb[1], sb[0]}, {"", sb[2], sb[0]}} {
		list := callIn(t, url, c.session, "sandbox_list", map[string]any{})
		if !strings.Contains(list, c.mine) || strings.Contains(list, c.other) {
			t.Errorf("session %q lists %s: want its own %s and not %s", c.session, list, c.mine, c.other)
		}
		for tool, args := range map[string]map[string]any{
			"sandbox_exec": {"sandbox_id": c.other, "command": "echo reached"},
			"read_file":    {"sandbox_id": c.other, "path": "x"},
			"sandbox_stop": {"sandbox_id": c.other},
		} {
			if got := callIn(t, url, c.session, tool, args); !strings.Contains(got, "no sandbox "+c.other+" in this session") {
				t.Errorf("session %q: %s on another session's sandbox: %s", c.session, tool, got)
			}
		}
	}
	return a, b, sb
}

// TestHTTPSessionsApartDocker is TestHTTPSessionsApart on the built
// server and the real engine (runc, or MCP_SANDBOX_TEST_RUNTIME).
func TestHTTPSessionsApartDocker(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	p := startHTTPServer(t, append(serverEnv(t, ""), "MCP_SANDBOX_TOKEN="+probeToken), "--http", "127.0.0.1:0")
	a, b, sb := checkSessionsApart(t, p.url, "python")
	callIn(t, p.url, b, "sandbox_stop", map[string]any{"all": true})
	for _, c := range []struct{ session, id string }{{a, sb[0]}, {"", sb[2]}} {
		if got := callIn(t, p.url, c.session, "sandbox_exec", map[string]any{"sandbox_id": c.id, "command": "echo alive"}); !strings.Contains(got, "alive") {
			t.Errorf("after all: true in session b, %s of session %q: %s", c.id, c.session, got)
		}
	}
	if status, _, body := rawCall(t, p.url, "2025-11-25", a, "", ""); status != http.StatusOK {
		t.Fatalf("DELETE session a: %d %s", status, body)
	}
	name := backend.ContainerName(sb[0])
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		out, err := exec.Command("docker", "ps", "-aq", "--filter", "name=^"+name+"$").Output()
		if err == nil && strings.TrimSpace(string(out)) == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("session a's container %s still there 30 s after its DELETE (%v)", name, err)
		}
	}
}

// live is the set of the engine's sandboxes.
func live(eng *sandbox.Engine) map[string]bool {
	m := map[string]bool{}
	for _, sb := range eng.Sandboxes() {
		m[sb.ID] = true
	}
	return m
}

// rawCall is rawSession for any MCP method (the Mcp-Method header of a
// 2026-07-28 request); an empty body sends DELETE.
func rawCall(t *testing.T, url, version, id, method, body string) (int, string, string) {
	t.Helper()
	verb := http.MethodPost
	if body == "" {
		verb = http.MethodDelete
	}
	req, err := http.NewRequest(verb, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+probeToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", version)
	if version == "2026-07-28" {
		req.Header.Set("Mcp-Method", method)
		if method == "tools/call" {
			var m struct {
				Params struct {
					Name string `json:"name"`
				} `json:"params"`
			}
			_ = json.Unmarshal([]byte(body), &m)
			req.Header.Set("Mcp-Name", m.Params.Name)
		}
	}
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}
