package mcpserver_test

import (
	"bufio"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/mcpserver"
)

// holdCall starts the probe's hold tool as request id of session sid and
// returns once the call is running (its progress arrived), with a function
// that reads the rest of the response stream.
func holdCall(t *testing.T, url, sid string, id int) (rest func() string) {
	t.Helper()
	body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hold","arguments":{},"_meta":{"progressToken":"p%d"}}}`, id, id)
	return openCall(t, url, probeToken, sid, body, "holding")
}

// openCall posts body with token in session sid (2025-11-25) and reads
// its response stream until it holds until; rest reads the remainder.
func openCall(t *testing.T, url, token, sid, body, until string) (rest func() string) {
	t.Helper()
	resp := post(t, url, token, sid, body)
	r := bufio.NewReader(resp.Body)
	var got strings.Builder
	for !strings.Contains(got.String(), until) {
		line, err := r.ReadString('\n')
		got.WriteString(line)
		if err != nil {
			t.Fatalf("the call ended before it said %q: %q, %v", until, got.String(), err)
		}
	}
	return func() string {
		defer resp.Body.Close()
		for {
			line, err := r.ReadString('\n')
			got.WriteString(line)
			if err != nil {
				return got.String()
			}
		}
	}
}

// post sends one JSON-RPC message as a 2025-11-25 client of session sid
// ("" for initialize).
func post(t *testing.T, url, token, sid, body string) *http.Response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if sid != "" {
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Mcp-Session-Id", sid)
	}
	resp, err := (&http.Client{Timeout: 2 * time.Minute}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

func cancelBody(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":%d,"reason":"test"}}`, id)
}

// TestHTTPCancelNoResponse: over HTTP, a session's notifications/cancelled
// stops its call and the call's response is never written; the same
// notification from another session (the same request id, as every
// client counts from 1) leaves the call alone. Raw HTTP on the real
// handler chain; no Docker.
func TestHTTPCancelNoResponse(t *testing.T) {
	srv := httptest.NewServer(mcpserver.ProbeHandler(probeToken, 3*time.Second))
	defer srv.Close()
	url := srv.URL + mcpserver.HTTPPath
	const legacy = "2025-11-25"
	_, a, _ := rawSession(t, url, http.MethodPost, "", "", sessionInit)
	_, b, _ := rawSession(t, url, http.MethodPost, "", "", sessionInit)

	rest := holdCall(t, url, a, 5)
	if status, _, body := rawSession(t, url, http.MethodPost, legacy, b, cancelBody(5)); status != http.StatusAccepted {
		t.Errorf("another session's cancellation: %d %q, want 202", status, body)
	}
	if got := rest(); !strings.Contains(got, `"id":5`) || !strings.Contains(got, "held") {
		t.Errorf("another session's cancellation stopped the call: %q", got)
	}

	rest = holdCall(t, url, a, 6)
	if status, _, body := rawSession(t, url, http.MethodPost, legacy, a, cancelBody(6)); status != http.StatusAccepted {
		t.Errorf("cancellation: %d %q, want 202", status, body)
	}
	if got := rest(); strings.Contains(got, `"id":6`) {
		t.Errorf("the cancelled call was answered: %q", got)
	}
	if status, _, body := rawSession(t, url, http.MethodPost, legacy, a, sessionList); status != http.StatusOK || !strings.Contains(body, `"hold"`) {
		t.Errorf("the session after the cancellation: %d %q", status, body)
	}
}
