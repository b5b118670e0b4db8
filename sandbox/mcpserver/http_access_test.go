package mcpserver_test

import (
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

const listTools = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`

// TestHTTPTokenGenerated: without MCP_SANDBOX_TOKEN the server generates a
// token, stores it 0600 in the state dir, never logs it, requires it, and
// uses the same one after a restart.
func TestHTTPTokenGenerated(t *testing.T) {
	env := serverEnv(t, "")
	p := startHTTPServer(t, env, "--http", "127.0.0.1:0")
	file := filepath.Join(envValue(env, "MCP_SANDBOX_STATE_DIR"), "http-token")
	st, err := os.Stat(file)
	if err != nil {
		t.Fatalf("token file: %v", err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("token file mode %v, want 0600", st.Mode().Perm())
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(string(data))
	if len(token) < 32 {
		t.Fatalf("token %q is too short", token)
	}
	checkTokenRequired(t, p.url, token)
	if strings.Contains(p.stderr.String(), token) {
		t.Error("the token appears in the server's log")
	}

	p.stop(t)
	p = startHTTPServer(t, env, "--http", "127.0.0.1:0")
	again, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(data), string(again)); diff != "" {
		t.Errorf("token file changed on restart (-before +after):\n%s", diff)
	}
	checkTokenRequired(t, p.url, token)
}

// TestHTTPTokenFromEnv: MCP_SANDBOX_TOKEN is the token when set, and then
// nothing is stored.
func TestHTTPTokenFromEnv(t *testing.T) {
	const token = "env-token-4f1c9a7e2b8d4c6a9e0f1b2c3d4e5f60"
	env := append(serverEnv(t, ""), "MCP_SANDBOX_TOKEN="+token)
	p := startHTTPServer(t, env, "--http", "127.0.0.1:0")
	checkTokenRequired(t, p.url, token)
	if _, err := os.Stat(filepath.Join(envValue(env, "MCP_SANDBOX_STATE_DIR"), "http-token")); err == nil {
		t.Error("a token file was stored although MCP_SANDBOX_TOKEN was set")
	}
	if strings.Contains(p.stderr.String(), token) {
		t.Error("the token appears in the server's log")
	}
}

// checkTokenRequired checks that only requests with the token get through
// (401 with WWW-Authenticate: Bearer otherwise), and that a real client
// with the token works.
func checkTokenRequired(t *testing.T, url, token string) {
	t.Helper()
	for _, tc := range []struct {
		name          string
		authorization string
		want          int
	}{
		{"no header", "", http.StatusUnauthorized},
		{"wrong token", "Bearer not-the-token", http.StatusUnauthorized},
		{"token with a suffix", "Bearer " + token + "x", http.StatusUnauthorized},
		{"token as Basic", "Basic " + token, http.StatusUnauthorized},
		{"bare token", token, http.StatusUnauthorized},
		{"right token", "Bearer " + token, http.StatusOK},
		{"scheme in lower case", "bearer " + token, http.StatusOK},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{}
			if tc.authorization != "" {
				h.Set("Authorization", tc.authorization)
			}
			status, header, body := rawPost(t, url, h, listTools)
			if status != tc.want {
				t.Fatalf("status %d, want %d: %s", status, tc.want, body)
			}
			if status == http.StatusUnauthorized && !strings.HasPrefix(header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("401 without WWW-Authenticate: Bearer (got %q)", header.Get("WWW-Authenticate"))
			}
			if status == http.StatusOK && !strings.Contains(body, `"sandbox_exec"`) {
				t.Errorf("tools/list did not list sandbox_exec: %s", body)
			}
		})
	}
	sess := sdkHTTPClient(t, url, &wireRecorder{token: token}, nil)
	tools, err := sess.ListTools(testContext(t, 30*time.Second), nil)
	if err != nil || len(tools.Tools) == 0 {
		t.Errorf("go-sdk client with the token: %v %+v", err, tools)
	}
}

// TestHTTPOrigin: a request from a web page whose origin is not in
// http.allowed_origins is refused with 403 before anything runs, even
// with the right token, loopback pages included (a sandbox's preview is
// one); requests without Origin (every non-browser client) and from a
// listed origin go through. mcp-go's Host check against DNS rebinding
// still applies.
func TestHTTPOrigin(t *testing.T) {
	const token = "origin-token-8a6b4c2d0e1f3a5b7c9d1e3f5a7b9c1d"
	env := append(serverEnv(t, "[http]\nallowed_origins = [\"http://localhost:6274\"]\n"), "MCP_SANDBOX_TOKEN="+token)
	p := startHTTPServer(t, env, "--http", "127.0.0.1:0")
	u, err := url.Parse(p.url)
	if err != nil {
		t.Fatal(err)
	}
	port := u.Port()
	executed := 0
	for _, tc := range []struct {
		name    string
		origins []string
		host    string
		want    int
	}{
		{"no Origin", nil, "", http.StatusOK},
		{"listed origin", []string{"http://localhost:6274"}, "", http.StatusOK},
		{"127.0.0.1 on this port", []string{"http://127.0.0.1:" + port}, "", http.StatusForbidden},
		{"localhost", []string{"http://localhost:" + port}, "", http.StatusForbidden},
		{"[::1]", []string{"http://[::1]:" + port}, "", http.StatusForbidden},
		{"a preview: loopback page on another port", []string{"http://127.0.0.1:6275"}, "", http.StatusForbidden},
		{"listed origin's host on another port", []string{"http://localhost:6275"}, "", http.StatusForbidden},
		{"foreign site", []string{"https://evil.example"}, "", http.StatusForbidden},
		{"foreign site on this port", []string{"http://evil.example:" + port}, "", http.StatusForbidden},
		{"name starting with localhost", []string{"http://localhost.evil.example:" + port}, "", http.StatusForbidden},
		{"name under a loopback IP", []string{"http://127.0.0.1.nip.io:" + port}, "", http.StatusForbidden},
		{"opaque origin", []string{"null"}, "", http.StatusForbidden},
		{"listed and foreign", []string{"http://localhost:6274", "https://evil.example"}, "", http.StatusForbidden},
		{"DNS rebinding: foreign Host", nil, "evil.example:" + port, http.StatusForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := http.Header{"Authorization": {"Bearer " + token}}
			for _, o := range tc.origins {
				h.Add("Origin", o)
			}
			if tc.host != "" {
				h.Set("Host", tc.host)
			}
			status, _, body := rawPost(t, p.url, h, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sandbox_stop","arguments":{"all":true}}}`)
			if status != tc.want {
				t.Errorf("status %d, want %d: %s", status, tc.want, body)
			}
			if status == http.StatusOK {
				executed++
			}
			if got := len(auditTools(t, env)); got != executed {
				t.Errorf("audit log has %d tool calls, want %d: a refused request ran, or an accepted one did not", got, executed)
			}
		})
	}
}

// TestHTTPLoopbackOnly: a non-loopback --http address is refused (exit 2,
// saying why and what to do) unless --allow-remote is given, which is
// warned about.
func TestHTTPLoopbackOnly(t *testing.T) {
	env := serverEnv(t, "")
	for _, tc := range []struct {
		name, addr string
		want       string
	}{
		{"all IPv4 interfaces", "0.0.0.0:0", "not a loopback address"},
		{"all IPv6 interfaces", "[::]:0", "not a loopback address"},
		{"no host", ":0", "not a loopback address"},
		{"LAN address", "192.0.2.10:8765", "not a loopback address"},
		{"host name", "example.com:8765", "not a loopback address"},
		{"no port", "127.0.0.1", "HOST:PORT"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out := runServe(t, env, "--http", tc.addr)
			if code != 2 || !strings.Contains(out, tc.want) {
				t.Errorf("exit code %d, want 2, and output mentioning %q:\n%s", code, tc.want, out)
			}
			if tc.want == "not a loopback address" && !strings.Contains(out, "--allow-remote") {
				t.Errorf("the refusal does not mention --allow-remote:\n%s", out)
			}
		})
	}
	for _, addr := range []string{"localhost:0", "[::1]:0"} {
		t.Run("loopback "+addr, func(t *testing.T) {
			p := startHTTPServer(t, env, "--http", addr)
			// Only the remote warning: without an engine the server
			// warns about that too, which is not this test's business.
			if strings.Contains(p.stderr.String(), "beyond this machine") {
				t.Errorf("remote warning on a loopback address:\n%s", p.stderr.String())
			}
		})
	}
	t.Run("allowed remote", func(t *testing.T) {
		const token = "remote-token-1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d"
		p := startHTTPServer(t, append(env[:len(env):len(env)], "MCP_SANDBOX_TOKEN="+token), "--http", "0.0.0.0:0", "--allow-remote")
		if !strings.Contains(p.stderr.String(), "level=WARN") || !strings.Contains(p.stderr.String(), "--allow-remote") {
			t.Errorf("no warning about --allow-remote:\n%s", p.stderr.String())
		}
		u, err := url.Parse(p.url)
		if err != nil {
			t.Fatal(err)
		}
		local := "http://127.0.0.1:" + u.Port() + u.Path
		if status, _, body := rawPost(t, local, http.Header{"Authorization": {"Bearer " + token}}, listTools); status != http.StatusOK {
			t.Errorf("status %d: %s", status, body)
		}
	})
}

// TestHTTPCORS: a browser page whose origin http.allowed_origins lists
// (the Inspector's web UI on localhost:6274, say) gets CORS answers, so
// it can connect with the token; any other page, on this machine or not,
// gets none, and a preflight never reaches MCP.
func TestHTTPCORS(t *testing.T) {
	const token = "cors-token-1f3a5b7c9d1e3f5a7b9c1d8a6b4c2d0e"
	env := serverEnv(t, "[http]\nallowed_origins = [\"http://localhost:6274\"]\n")
	p := startHTTPServer(t, append(env, "MCP_SANDBOX_TOKEN="+token), "--http", "127.0.0.1:0")
	preflight := func(origin string) *http.Response {
		t.Helper()
		req, err := http.NewRequest(http.MethodOptions, p.url, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Origin", origin)
		req.Header.Set("Access-Control-Request-Method", "POST")
		req.Header.Set("Access-Control-Request-Headers", "authorization, content-type, mcp-protocol-version")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp
	}
	resp := preflight("http://localhost:6274")
	h := resp.Header
	if resp.StatusCode != http.StatusNoContent || h.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(h.Get("Access-Control-Allow-Headers"), "Authorization") || !strings.Contains(h.Get("Access-Control-Allow-Methods"), "POST") {
		t.Errorf("preflight from a loopback page: %d %v", resp.StatusCode, h)
	}
	for _, o := range []string{"https://evil.example", "http://127.0.0.1:6274"} {
		if resp := preflight(o); resp.StatusCode != http.StatusForbidden || resp.Header.Get("Access-Control-Allow-Origin") != "" {
			t.Errorf("preflight from %s, not listed: %d %v", o, resp.StatusCode, resp.Header)
		}
	}
	// The request itself still needs the token, and its answer names the
	// page and exposes the session header.
	status, header, body := rawPost(t, p.url, http.Header{"Origin": {"http://localhost:6274"}}, listTools)
	if status != http.StatusUnauthorized || header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" {
		t.Errorf("without the token: %d %v %s", status, header, body)
	}
	status, header, body = rawPost(t, p.url, http.Header{"Origin": {"http://localhost:6274"}, "Authorization": {"Bearer " + token}}, listTools)
	if status != http.StatusOK || header.Get("Access-Control-Allow-Origin") != "http://localhost:6274" ||
		!strings.Contains(header.Get("Access-Control-Expose-Headers"), "Mcp-Session-Id") || !strings.Contains(body, `"sandbox_exec"`) {
		t.Errorf("with the token: %d %v %s", status, header, body)
	}
}
