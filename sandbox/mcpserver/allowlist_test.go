package mcpserver_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// serveOn127002 serves a one-line answer on 127.0.0.2 and returns its port.
func serveOn127002(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this host: %v", err)
	}
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello %s", r.URL.Path)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

type networkOut struct {
	Mode    string `json:"mode"`
	Note    string `json:"note"`
	Allowed []string
	Refused []struct {
		Host  string `json:"host"`
		Count int    `json:"count"`
	} `json:"refused"`
	BytesIn  int64 `json:"bytes_in"`
	BytesOut int64 `json:"bytes_out"`
}

// TestAllowlistOverStdio: a sandbox created with network allowlist and
// no allow_domains of its own gets the config's whole network.allow_domains;
// run_code reaches an allowed host:port through the proxy and is answered
// 403 for another; sandbox_list shows each sandbox's network as an object
// (mode, allowed entries, refused hosts with counts, bytes each way), and
// the audit log has one entry per proxied request.
func TestAllowlistOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	ok, refused := serveOn127002(t), serveOn127002(t)
	entry := fmt.Sprintf("127.0.0.2:%d", ok)
	env := serverEnv(t, fmt.Sprintf("[network]\nallow_domains = [%q]\n", entry))
	p := startServer(t, env)
	sess := sdkClient(t, p, nil)
	res := call(t, sess, "sandbox_create", map[string]any{"network": "allowlist"})
	if res.IsError {
		t.Fatal(text(res))
	}
	var c struct {
		SandboxID string `json:"sandbox_id"`
		Network   string `json:"network"`
	}
	structured(t, res, &c)
	other := createSandboxes(t, sess, 1)[0]
	code := `import urllib.request, urllib.error
for port in (%d, %d):
    try:
        print(urllib.request.urlopen("http://127.0.0.2:%%d/x" %% port, timeout=20).read().decode())
    except urllib.error.HTTPError as e:
        print(e.code, e.read().decode())`
	res = call(t, sess, "run_code", map[string]any{"sandbox_id": c.SandboxID, "code": fmt.Sprintf(code, ok, refused)})
	if out := text(res); res.IsError || !strings.Contains(out, "hello /x") || !strings.Contains(out, fmt.Sprintf("403 mcp-sandbox refused 127.0.0.2:%d", refused)) {
		t.Fatalf("run_code: %s", out)
	}

	var list struct {
		Sandboxes []struct {
			ID      string     `json:"sandbox_id"`
			Network networkOut `json:"network"`
		} `json:"sandboxes"`
	}
	res = call(t, sess, "sandbox_list", nil)
	structured(t, res, &list)
	nets := map[string]networkOut{}
	for _, s := range list.Sandboxes {
		nets[s.ID] = s.Network
	}
	n := nets[c.SandboxID]
	if n.Mode != "allowlist" || len(n.Allowed) != 1 || n.Allowed[0] != entry || len(n.Refused) != 1 ||
		n.Refused[0].Host != fmt.Sprintf("127.0.0.2:%d", refused) || n.Refused[0].Count != 1 || n.BytesIn == 0 || n.BytesOut == 0 {
		t.Errorf("allowlist sandbox's network: %+v\n%s", n, text(res))
	}
	if n := nets[other]; n.Mode != "none" || !strings.Contains(n.Note, "no network") || n.Allowed == nil || n.Refused == nil {
		t.Errorf("none sandbox's network: %+v", n)
	}
	checkAuditFile(t, env, c.SandboxID, ok, refused)
}

// checkAuditFile finds the allowed and the refused request in the
// server's audit log.
func checkAuditFile(t *testing.T, env []string, id string, ok, refused int) {
	t.Helper()
	var dir string
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "MCP_SANDBOX_STATE_DIR="); found {
			dir = v
		}
	}
	st, err := state.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := st.ReadAudit(100)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, e := range entries {
		if e.Tool == "network" && e.SandboxID == id && e.Network != nil && e.Network.Allowed == (e.Network.Port == ok) {
			seen[e.Network.Port] = true
		}
	}
	if !seen[ok] || !seen[refused] {
		b, _ := os.ReadFile(filepath.Join(dir, "audit.jsonl"))
		t.Errorf("audit log lacks the requests to %d (allowed) and %d (refused):\n%s", ok, refused, b)
	}
}
