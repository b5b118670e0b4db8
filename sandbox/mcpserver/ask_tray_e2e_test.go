package mcpserver_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// fakeTray plays the tray on a state directory: it listens for
// questions, answers each by the host it names (no answer for a host
// missing from answers), and keeps every question it saw, even after it
// stopped listening.
type fakeTray struct {
	st      *state.Store
	answers map[string]string
	mu      sync.Mutex
	seen    []string
}

func (f *fakeTray) run(ctx context.Context) {
	answered := map[string]bool{}
	for ctx.Err() == nil {
		for _, q := range f.st.Questions(time.Now()) {
			if answered[q.ID] {
				continue
			}
			answered[q.ID] = true
			f.mu.Lock()
			f.seen = append(f.seen, q.SandboxID+" "+q.Client+" "+q.Language+" "+strings.Join(q.Entries, ","))
			f.mu.Unlock()
			if choice, ok := f.answers[q.Entries[0]]; ok {
				f.st.PutAnswer(state.Answer{ID: q.ID, Choice: choice, AnsweredAt: time.Now()})
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (f *fakeTray) questions() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.seen...)
}

// TestAllowlistAsksThroughTheTrayOverStdio: the real server, a client
// with NO elicitation capability, a tray of the installation listening.
// A host no entry names is put to the tray: allow and always let the
// request past the policy (to the host's resolver: .invalid names end in
// a 502, never a 403), always also writes the entry into the config file
// in use keeping its comment; deny, and no answer before the deadline
// (shortened by MCP_SANDBOX_ASK_TIMEOUT), answer 403 with how to allow it
// in the config. Once no tray listens, nobody is asked: 403 at once.
func TestAllowlistAsksThroughTheTrayOverStdio(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	env := append(serverEnv(t, "# mine\n[network]\nallow_domains = []\n"), "MCP_SANDBOX_ASK_TIMEOUT=3s")
	var stateDir string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "MCP_SANDBOX_STATE_DIR="); ok {
			stateDir = v
		}
	}
	st, err := state.Open(stateDir)
	if err != nil {
		t.Fatal(err)
	}
	listener, err := st.ListenAsks()
	if err != nil {
		t.Fatal(err)
	}
	defer listener.Close()
	tray := &fakeTray{st: st, answers: map[string]string{"allow.invalid:80": "allow", "always.invalid:80": "always", "deny.invalid:80": "deny"}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go tray.run(ctx)

	p := startServer(t, env)
	c := mcp.NewClient(&mcp.Implementation{Name: "Claude Desktop", Version: "1.0"}, nil)
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
	got := fetchHosts(t, sess, made.SandboxID, "allow.invalid", "deny.invalid", "always.invalid", "late.invalid")
	for host, want := range map[string]string{"allow.invalid": "502", "always.invalid": "502", "deny.invalid": "403", "late.invalid": "403"} {
		if !strings.HasPrefix(got[host], want) {
			t.Errorf("%s: %q, want %s", host, got[host], want)
		}
		why := map[string]string{"deny.invalid": "the person asked declined it", "late.invalid": "no person allowed it"}[host]
		if want == "403" && (!strings.Contains(got[host], "network.allow_domains") || !strings.Contains(got[host], why)) {
			t.Errorf("%s: the 403 does not say how to allow it in the config: %q", host, got[host])
		}
	}
	qs := tray.questions()
	if len(qs) != 4 {
		t.Errorf("the tray was asked %d times, want once per host: %q", len(qs), qs)
	}
	for _, q := range qs {
		if !strings.HasPrefix(q, made.SandboxID+" Claude Desktop python ") {
			t.Errorf("the question does not say whose sandbox wants what: %q", q)
		}
	}
	b, err := os.ReadFile(configPathOf(t, env))
	if err != nil || !strings.Contains(string(b), `"always.invalid:80"`) || strings.Contains(string(b), "allow.invalid") || strings.Contains(string(b), "deny.invalid") || !strings.Contains(string(b), "# mine") {
		t.Errorf("config after Always (%v):\n%s", err, b)
	}
	if backups, _ := filepath.Glob(configPathOf(t, env) + "*bak*"); len(backups) == 0 {
		t.Errorf("no backup of the config beside it")
	}

	listener.Close() // the tray quits
	got = fetchHosts(t, sess, made.SandboxID, "notray.invalid")
	if !strings.HasPrefix(got["notray.invalid"], "403") || !strings.Contains(got["notray.invalid"], "network.allow_domains") {
		t.Errorf("without a tray: %q", got["notray.invalid"])
	}
	if qs := tray.questions(); len(qs) != 4 {
		t.Errorf("a question was put with no tray listening: %q", qs)
	}
}

// fetchHosts fetches http://HOST/x for each host in the sandbox through
// its proxy, and returns each one's status and body.
func fetchHosts(t *testing.T, sess *mcp.ClientSession, id string, hosts ...string) map[string]string {
	t.Helper()
	code := `import urllib.request, urllib.error
for host in ` + pyList(hosts) + `:
    try:
        urllib.request.urlopen("http://%s/x" % host, timeout=30)
        print(host, 200)
    except urllib.error.HTTPError as e:
        print(host, e.code, e.read().decode().strip())`
	res := call(t, sess, "run_code", map[string]any{"sandbox_id": id, "code": code})
	got := map[string]string{}
	for _, l := range strings.Split(text(res), "\n") {
		if host, rest, ok := strings.Cut(strings.TrimSpace(l), " "); ok && strings.HasSuffix(host, ".invalid") {
			got[host] = rest
		}
	}
	if res.IsError || len(got) != len(hosts) {
		t.Fatalf("run_code: %s", text(res))
	}
	return got
}

func pyList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = `"` + s + `"`
	}
	return "[" + strings.Join(q, ", ") + "]"
}
