package mcpserver_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// The protocol revisions the server is held to: 2026-07-28, the stateless
// core (server/discover, no initialize, no HTTP session), and 2025-11-25,
// the last with the initialize handshake, which most clients speak today.
const (
	rev20260728 = "2026-07-28"
	rev20251125 = "2025-11-25"
)

// protocolRun lists the tools and runs Python through sess, and checks the
// revision the official SDK client settled on.
func protocolRun(t *testing.T, sess *mcp.ClientSession, want string) {
	t.Helper()
	if got := sess.InitializeResult().ProtocolVersion; got != want {
		t.Errorf("negotiated %q, want %q", got, want)
	}
	if si := sess.InitializeResult().ServerInfo; si == nil || si.Name != "mcp-sandbox" {
		t.Errorf("server info %+v, want mcp-sandbox", si)
	}
	lt, err := sess.ListTools(testContext(t, time.Minute), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	if len(lt.Tools) < 5 {
		t.Errorf("tools/list gave %d tools", len(lt.Tools))
	}
	res := call(t, sess, "run_code", map[string]any{"code": "print(6*7)"})
	var ex execOut
	structured(t, res, &ex)
	if res.IsError || ex.ExitCode != 0 || ex.Stdout != "42\n" {
		t.Errorf("run_code at %s: %+v %s", want, ex, text(res))
	}
}

// TestProtocolRevisionsStdio: the official SDK client gets each revision
// it asks for over stdio; at 2026-07-28 the server answered server/discover
// (its first answer lists the supported versions), before that initialize.
func TestProtocolRevisionsStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	for _, rev := range []string{rev20260728, rev20251125} {
		t.Run(rev, func(t *testing.T) {
			p := startServer(t, serverEnv(t, ""))
			c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-protocol-test", Version: "1.0"}, nil)
			sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin},
				&mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v\nstderr: %s", err, p.stderr.String())
			}
			defer sess.Close()
			protocolRun(t, sess, rev)

			var first struct {
				Result struct {
					SupportedVersions []string `json:"supportedVersions"`
					ProtocolVersion   string   `json:"protocolVersion"`
				} `json:"result"`
			}
			p.wire.mu.Lock()
			err = json.Unmarshal(p.wire.lines[0], &first)
			p.wire.mu.Unlock()
			if err != nil {
				t.Fatal(err)
			}
			r := first.Result
			switch {
			case rev == rev20260728 && (r.ProtocolVersion != "" || !contains(r.SupportedVersions, rev20260728, rev20251125)):
				t.Errorf("first answer %+v, want server/discover's, listing both revisions", r)
			case rev == rev20251125 && r.ProtocolVersion != rev20251125:
				t.Errorf("first answer %+v, want initialize's at %s", r, rev)
			}
		})
	}
}

func contains(have []string, want ...string) bool {
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			return false
		}
	}
	return true
}

// headerLog adds the bearer token to each request and records the
// protocol headers of requests and responses.
type headerLog struct {
	mu         sync.Mutex
	versions   []string // MCP-Protocol-Version of each request
	sessionIDs []string // Mcp-Session-Id of requests and responses
}

func (h *headerLog) RoundTrip(req *http.Request) (*http.Response, error) {
	req = req.Clone(req.Context())
	req.Header.Set("Authorization", "Bearer "+httpToken)
	resp, err := http.DefaultTransport.RoundTrip(req)
	h.mu.Lock()
	defer h.mu.Unlock()
	if req.Method == http.MethodPost {
		h.versions = append(h.versions, req.Header.Get("Mcp-Protocol-Version"))
	}
	for _, id := range []string{req.Header.Get("Mcp-Session-Id"), responseHeader(resp, "Mcp-Session-Id")} {
		if id != "" {
			h.sessionIDs = append(h.sessionIDs, id)
		}
	}
	return resp, err
}

func responseHeader(resp *http.Response, k string) string {
	if resp == nil {
		return ""
	}
	return resp.Header.Get(k)
}

// TestProtocolRevisionsHTTP: the same over streamable HTTP. At 2026-07-28
// the exchange is stateless (no Mcp-Session-Id either way, the revision in
// every request's header); at 2025-11-25 the server hands out a session.
func TestProtocolRevisionsHTTP(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	for _, rev := range []string{rev20260728, rev20251125} {
		t.Run(rev, func(t *testing.T) {
			p := startHTTPServer(t, append(serverEnv(t, ""), "MCP_SANDBOX_TOKEN="+httpToken), "--http", "127.0.0.1:0")
			log := &headerLog{}
			c := mcp.NewClient(&mcp.Implementation{Name: "go-sdk-protocol-test", Version: "1.0"}, nil)
			sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.StreamableClientTransport{
				Endpoint: p.url, HTTPClient: &http.Client{Transport: log}, MaxRetries: -1,
			}, &mcp.ClientSessionOptions{ProtocolVersion: rev})
			if err != nil {
				t.Fatalf("connect: %v", err)
			}
			protocolRun(t, sess, rev)
			sess.Close()

			log.mu.Lock()
			defer log.mu.Unlock()
			switch rev {
			case rev20260728:
				if len(log.sessionIDs) > 0 {
					t.Errorf("a stateless exchange carried session ids %q", log.sessionIDs)
				}
				for i, v := range log.versions {
					if v != rev20260728 {
						t.Errorf("request %d had MCP-Protocol-Version %q, want %s", i, v, rev20260728)
					}
				}
			case rev20251125:
				if len(log.sessionIDs) == 0 {
					t.Error("the server handed out no session at 2025-11-25")
				}
			}
		})
	}
}

// TestProtocolFallback: what the server does with revisions it cannot
// serve the way they are asked for. The initialize handshake cannot carry
// 2026-07-28 (or anything newer), so the server answers it at 2025-11-25;
// server/discover at an unknown revision is refused with the versions it
// supports, from which a client picks one; and the session goes on.
func TestProtocolFallback(t *testing.T) {
	p := startServer(t, serverEnv(t, ""))
	enc := json.NewEncoder(p.stdin)
	dec := json.NewDecoder(p.stdout)
	rt := func(msg map[string]any) map[string]any {
		t.Helper()
		if err := enc.Encode(msg); err != nil {
			t.Fatal(err)
		}
		var out map[string]any
		if err := dec.Decode(&out); err != nil {
			t.Fatalf("%v\nstderr: %s", err, p.stderr.String())
		}
		return out
	}
	meta := func(rev string) map[string]any {
		return map[string]any{"_meta": map[string]any{
			"io.modelcontextprotocol/protocolVersion":    rev,
			"io.modelcontextprotocol/clientInfo":         map[string]any{"name": "raw", "version": "1"},
			"io.modelcontextprotocol/clientCapabilities": map[string]any{},
		}}
	}

	// A 2026-07-28 client that finds nothing newer than it is fine.
	got := rt(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": meta("2099-01-01")})
	e, _ := got["error"].(map[string]any)
	data, _ := e["data"].(map[string]any)
	var supported []string
	for _, v := range asSlice(data["supported"]) {
		supported = append(supported, v.(string))
	}
	if e == nil || !contains(supported, rev20260728, rev20251125) {
		t.Errorf("server/discover at 2099-01-01 = %v, want an error listing the supported versions", got)
	}

	for i, ask := range []string{rev20260728, "2099-01-01"} {
		got = rt(map[string]any{"jsonrpc": "2.0", "id": 2 + i, "method": "initialize", "params": map[string]any{
			"protocolVersion": ask, "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"},
		}})
		res, _ := got["result"].(map[string]any)
		if res == nil || res["protocolVersion"] != rev20251125 {
			t.Errorf("initialize at %s = %v, want an answer at %s", ask, got, rev20251125)
		}
	}
	if err := enc.Encode(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"}); err != nil {
		t.Fatal(err)
	}
	got = rt(map[string]any{"jsonrpc": "2.0", "id": 9, "method": "tools/list"})
	res, _ := got["result"].(map[string]any)
	if res == nil || !strings.Contains(toJSON(res["tools"]), `"run_code"`) {
		t.Errorf("tools/list after the fallback = %v", got)
	}
}

func asSlice(v any) []any { s, _ := v.([]any); return s }

func toJSON(v any) string { b, _ := json.Marshal(v); return string(b) }
