package mcpserver_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// Bodies of the raw session test.
const (
	sessionInit = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`
	sessionList = `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	// modernList is a 2026-07-28 request: no session, the revision in
	// the header and in _meta.
	modernList = `{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"raw","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}}}`
)

// rawSession sends one request to the real handler chain and returns the
// status, the session id header of the answer and the body.
func rawSession(t *testing.T, url, method, version, id, body string) (int, string, string) {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+probeToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if version != "" {
		req.Header.Set("Mcp-Protocol-Version", version)
	}
	if version == "2026-07-28" {
		req.Header.Set("Mcp-Method", "tools/list") // the only modern request here
	}
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	// Bounded: a GET that is not refused opens an event stream.
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), string(b)
}

// TestHTTPSessionLifecycle: a session id means something over HTTP (MCP
// specification, streamable HTTP, session management): initialize issues
// one, a request with it is served, DELETE ends it, and a request with an
// ended or made-up id gets 404 (so the client starts a new session). A
// 2026-07-28 request, which has no session, is served without one. Raw
// HTTP on the real handler chain; no Docker.
func TestHTTPSessionLifecycle(t *testing.T) {
	srv := httptest.NewServer(mcpserver.ProbeHandler(probeToken, time.Millisecond))
	defer srv.Close()
	url := srv.URL + mcpserver.HTTPPath
	const legacy = "2025-11-25"

	status, id, body := rawSession(t, url, http.MethodPost, "", "", sessionInit)
	if status != http.StatusOK || id == "" {
		t.Fatalf("initialize: %d, session id %q, want 200 and an id; body %s", status, id, body)
	}
	_, other, _ := rawSession(t, url, http.MethodPost, "", "", sessionInit)
	if other == id || other == "" {
		t.Fatalf("a second initialize got id %q (the first %q): ids must be new", other, id)
	}
	for _, step := range []struct {
		name, method, version, id, body string
		want                            int
		wantIn                          string
	}{
		{"a call with the id", http.MethodPost, legacy, id, sessionList, http.StatusOK, `"probe"`},
		{"a call with a made-up id", http.MethodPost, legacy, "mcp-sandbox-00000000000000000000000000000000", sessionList, http.StatusNotFound, ""},
		{"a GET stream with a made-up id", http.MethodGet, legacy, "made-up", "", http.StatusNotFound, ""},
		{"DELETE ends the session", http.MethodDelete, legacy, id, "", http.StatusOK, ""},
		{"a call after DELETE", http.MethodPost, legacy, id, sessionList, http.StatusNotFound, ""},
		{"DELETE again", http.MethodDelete, legacy, id, "", http.StatusNotFound, ""},
		{"DELETE of a made-up id", http.MethodDelete, legacy, "made-up", "", http.StatusNotFound, ""},
		{"the other session lives on", http.MethodPost, legacy, other, sessionList, http.StatusOK, `"probe"`},
		{"2026-07-28 without an id", http.MethodPost, "2026-07-28", "", modernList, http.StatusOK, `"probe"`},
	} {
		status, _, body := rawSession(t, url, step.method, step.version, step.id, step.body)
		if status != step.want || !strings.Contains(body, step.wantIn) {
			t.Errorf("%s: %d %q, want %d with %q", step.name, status, body, step.want, step.wantIn)
		}
	}
}
