package mcpserver_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

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
// the audit log has one entry per proxied request; the sandbox's state
// record and its logs resource show the same connections.
func TestAllowlistOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	allowlistOverStdio(t, serverEnv)
}

func allowlistOverStdio(t *testing.T, backend backendEnv) {
	ok, refused := serveOn127002(t), serveOn127002(t)
	entry := fmt.Sprintf("127.0.0.2:%d", ok)
	env := backend(t, fmt.Sprintf("[network]\nallow_domains = [%q]\n", entry))
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
	checkTrafficSeen(t, sess, env, c.SandboxID, n, ok, refused)
}

// checkTrafficSeen: the allowlist sandbox's record in the state
// directory (for the window) holds what sandbox_list showed, and its logs
// resource has a line for the allowed and the refused request; the record
// goes with the sandbox.
func checkTrafficSeen(t *testing.T, sess *mcp.ClientSession, env []string, id string, listed networkOut, ok, refused int) {
	t.Helper()
	st, err := state.Open(stateDirOf(env))
	if err != nil {
		t.Fatal(err)
	}
	var rec state.Record
	deadline := time.Now().Add(10 * time.Second)
	for {
		rec, err = st.ReadRecord(id)
		if err == nil && rec.Traffic != nil && rec.Traffic.RefusedConns == 1 && rec.Traffic.Open == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("record %+v (%v): no refused connection within 10 s", rec.Traffic, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	tr := rec.Traffic
	if !slices.Equal(tr.Allowed, listed.Allowed) || len(tr.Refused) != 1 || tr.Refused[0].Host != listed.Refused[0].Host ||
		tr.Refused[0].Count != 1 || tr.BytesIn != listed.BytesIn || tr.BytesOut != listed.BytesOut || tr.AllowedConns != 1 {
		t.Errorf("record %+v, sandbox_list %+v", tr, listed)
	}

	res, err := sess.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: "sandbox://" + id + "/logs"})
	if err != nil || len(res.Contents) != 1 {
		t.Fatalf("logs: %v %+v", err, res)
	}
	logs := res.Contents[0].Text
	for _, want := range []string{
		"=== network: 2 connections",
		fmt.Sprintf("GET 127.0.0.2:%d allowed (", ok),
		fmt.Sprintf("GET 127.0.0.2:%d refused: ", refused),
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("logs lack %q:\n%s", want, logs)
		}
	}

	if res := call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": id}); res.IsError {
		t.Fatal(text(res))
	}
	if _, err := st.ReadRecord(id); !errors.Is(err, state.ErrNoRecord) {
		t.Errorf("record after stop: %v", err)
	}
}

func stateDirOf(env []string) string {
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "MCP_SANDBOX_STATE_DIR="); found {
			return v
		}
	}
	return ""
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

// TestAllowlistAsksThePersonOverStdio: the real server, a client that
// declared elicitation. A host no entry names is asked about once, in the
// words the person sees (sandbox, language, client, host:port); Deny
// answers the program 403 and saying so; Always lets the request past the
// policy (to the host's resolver: .invalid names never resolve, so it ends
// in a 502, never a 403) and writes the entry into the config file in use,
// keeping its comment. The AI never opens it: the sandbox was created
// without naming the host.
func TestAllowlistAsksThePersonOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	cfg := "# mine\n[network]\nallow_domains = []\n"
	env := serverEnv(t, cfg)
	var asked []string
	var mu sync.Mutex
	handler := func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		mu.Lock()
		defer mu.Unlock()
		asked = append(asked, req.Params.Message)
		choice := "deny"
		switch m := req.Params.Message; {
		case strings.Contains(m, "always.invalid"):
			choice = "always"
		case strings.Contains(m, "asks for a new") && !strings.Contains(m, "deny-me"):
			// The most permissive answer: it must still not save a
			// loopback entry.
			choice = "always"
		}
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": choice}}, nil
	}
	p := startServer(t, env)
	c := mcp.NewClient(&mcp.Implementation{Name: "Claude Desktop", Version: "1.0"}, &mcp.ClientOptions{ElicitationHandler: handler})
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		t.Fatalf("connect: %v\nstderr: %s", err, p.stderr.String())
	}
	t.Cleanup(func() { sess.Close() })
	res := call(t, sess, "sandbox_create", map[string]any{"network": "allowlist"})
	if res.IsError {
		t.Fatal(text(res))
	}
	var made struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &made)
	code := `import urllib.request, urllib.error
for host in ("denied.invalid", "always.invalid", "denied.invalid"):
    try:
        urllib.request.urlopen("http://%s/x" % host, timeout=30)
        print(host, 200)
    except urllib.error.HTTPError as e:
        print(host, e.code, e.read().decode().strip())`
	res = call(t, sess, "run_code", map[string]any{"sandbox_id": made.SandboxID, "code": code})
	out := text(res)
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, ".invalid ") {
			lines = append(lines, strings.TrimSpace(l))
		}
	}
	if res.IsError || len(lines) != 3 || !strings.HasPrefix(lines[0], "denied.invalid 403") ||
		!strings.HasPrefix(lines[1], "always.invalid 502") || !strings.HasPrefix(lines[2], "denied.invalid 403") {
		t.Fatalf("run_code: %s", out)
	}
	checkCreateAsks(t, sess)
	mu.Lock()
	defer mu.Unlock()
	var creates []string
	asked = slices.DeleteFunc(asked, func(m string) bool {
		if strings.Contains(m, "asks for a new") {
			creates = append(creates, m)
			return true
		}
		return false
	})
	if len(creates) != 2 || !strings.Contains(creates[0], "Claude Desktop asks for a new python sandbox and these, allowed for this sandbox only") ||
		!strings.Contains(creates[0], "⚠ 127.0.0.2:") || !strings.Contains(creates[0], "a loopback address") {
		t.Errorf("sandbox_create's questions: %q", creates)
	}
	if len(asked) != 2 {
		t.Fatalf("asked %d times, want once per host: %q", len(asked), asked)
	}
	for _, m := range asked {
		if !strings.Contains(m, made.SandboxID[:8]) || !strings.Contains(m, "python") || !strings.Contains(m, "Claude Desktop") || !strings.Contains(m, ".invalid:80") {
			t.Errorf("the question does not say whose sandbox wants what: %q", m)
		}
	}
	b, err := os.ReadFile(configPathOf(t, env))
	if err != nil || !strings.Contains(string(b), `"always.invalid:80"`) || strings.Contains(string(b), "denied.invalid") || strings.Contains(string(b), "127.0.0.2") || !strings.Contains(string(b), "# mine") {
		t.Errorf("config after Always (%v):\n%s", err, b)
	}
}

// checkCreateAsks: sandbox_create naming a host the config does not
// cover is put to the person, once for its list: allowed, the sandbox
// reaches it (even "Always" does not save its loopback entry); denied,
// the create fails saying the person declined.
func checkCreateAsks(t *testing.T, sess *mcp.ClientSession) {
	t.Helper()
	port := serveOn127002(t)
	res := call(t, sess, "sandbox_create", map[string]any{"network": "allowlist", "allow_domains": []string{fmt.Sprintf("127.0.0.2:%d", port)}})
	if res.IsError {
		t.Fatalf("create with a host the person allows: %s", text(res))
	}
	var made struct {
		SandboxID string `json:"sandbox_id"`
	}
	structured(t, res, &made)
	code := fmt.Sprintf("import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.2:%d/y', timeout=20).read().decode())", port)
	if res := call(t, sess, "run_code", map[string]any{"sandbox_id": made.SandboxID, "code": code}); !strings.Contains(text(res), "hello /y") {
		t.Errorf("the host a person allowed at create: %s", text(res))
	}
	res = call(t, sess, "sandbox_create", map[string]any{"network": "allowlist", "allow_domains": []string{"deny-me.invalid"}})
	if !res.IsError || !strings.Contains(text(res), "the person asked declined it") {
		t.Errorf("create with a host the person denies: %s", text(res))
	}
}

// configPathOf is the config file serverEnv wrote.
func configPathOf(t *testing.T, env []string) string {
	t.Helper()
	for _, kv := range env {
		if v, found := strings.CutPrefix(kv, "MCP_SANDBOX_CONFIG="); found {
			return v
		}
	}
	t.Fatal("serverEnv sets no MCP_SANDBOX_CONFIG")
	return ""
}
