package sandbox_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// hostServer serves h on 127.0.0.2 (a loopback address no entry covers
// by accident), over TLS when cert is given; it returns its port.
func hostServer(t *testing.T, h http.Handler, cert *tls.Certificate) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this host: %v", err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	if cert != nil {
		ln = tls.NewListener(ln, &tls.Config{Certificates: []tls.Certificate{*cert}})
	}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return ln.Addr().(*net.TCPAddr).Port
}

// testCert is a self-signed certificate for 127.0.0.2, and its PEM.
func testCert(t *testing.T) (tls.Certificate, string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "mcp-sandbox test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.2")}, IsCA: true, BasicConstraintsValid: true,
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
}

// tinyWheel is a pure-Python wheel of package name, version 1.0, whose
// module says hello.
func tinyWheel(t *testing.T, name string) (string, []byte) {
	t.Helper()
	dist := name + "-1.0.dist-info/"
	files := []struct{ name, body string }{
		{name + ".py", "HELLO = 'hello from " + name + "'\n"},
		{dist + "METADATA", "Metadata-Version: 2.1\nName: " + name + "\nVersion: 1.0\n"},
		{dist + "WHEEL", "Wheel-Version: 1.0\nGenerator: mcp-sandbox-test\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
	}
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	var record strings.Builder
	for _, f := range files {
		w, err := zw.Create(f.name)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = w.Write([]byte(f.body))
		fmt.Fprintf(&record, "%s,,\n", f.name)
	}
	record.WriteString(dist + "RECORD,,\n")
	w, _ := zw.Create(dist + "RECORD")
	_, _ = w.Write([]byte(record.String()))
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return name + "-1.0-py3-none-any.whl", buf.Bytes()
}

// netDevs lists the interfaces /proc/net/dev shows inside sandbox id.
func netDevs(t *testing.T, eng *sandbox.Engine, id string) []string {
	t.Helper()
	res := mustExec(t, eng, id, "cat /proc/net/dev")
	var devs []string
	for _, l := range strings.Split(res.Stdout, "\n") {
		if name, _, ok := strings.Cut(l, ":"); ok && !strings.Contains(name, "|") {
			devs = append(devs, strings.TrimSpace(name))
		}
	}
	return devs
}

const fetchPy = `
import ssl, sys, urllib.request, urllib.error
ctx = ssl.create_default_context(cadata=sys.stdin.read() or None)
try:
    with urllib.request.urlopen(sys.argv[1], timeout=20, context=ctx) as r:
        print(r.status, r.read().decode())
except urllib.error.HTTPError as e:
    print(e.code, e.read().decode())
`

// fetch runs fetchPy in sandbox id for url, trusting /tmp/ca.pem there.
func fetch(t *testing.T, eng *sandbox.Engine, id, url string) string {
	t.Helper()
	res, err := eng.Exec(t.Context(), id, sandbox.ExecRequest{
		Command: "cat >/tmp/fetch.py <<'EOF'\n" + fetchPy + "\nEOF\npython3 /tmp/fetch.py '" + url + "' </tmp/ca.pem",
	})
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(res.Stdout + res.Stderr)
}

// TestAllowlistProxy: an allowlist sandbox has only a loopback interface,
// like one in mode none, yet reaches a host server on 127.0.0.2 through
// the proxy its environment names, over plain HTTP, CONNECT+TLS and pip,
// only on the port an entry names; every other one is answered 403 with
// the line saying how to allow it. Each connection is in the audit log and
// in the sandbox's network counters.
func TestAllowlistProxy(t *testing.T) {
	t.Parallel()
	cert, caPEM := testCert(t)
	plain := hostServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "plain %s", r.URL.Path)
	}), nil)
	other := hostServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "must not be reached")
	}), nil)
	secure := hostServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "tls %s", r.URL.Path)
	}), &cert)
	whl, wheel := tinyWheel(t, "mcpsbxtiny")
	index := hostServer(t, indexHandler(whl, wheel), nil)
	entry := func(port int) string { return "127.0.0.2:" + strconv.Itoa(port) }
	allowed := []string{entry(plain), entry(secure), entry(index)}
	eng, te := newEngineWith(t, engineOptions{scoped: true, edit: func(c *config.Config) {
		c.Network.AllowDomains = append(slices.Clone(allowed), entry(other))
	}})

	none := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Network: sandbox.NetworkAllowlist, AllowDomains: allowed})
	for _, id := range []string{none.ID, sb.ID} {
		if got := netDevs(t, eng, id); !slices.Equal(got, []string{"lo"}) {
			t.Errorf("sandbox %s: /proc/net/dev shows %q, want only lo", id, got)
		}
	}
	if env := mustExec(t, eng, sb.ID, "echo $HTTP_PROXY $HTTPS_PROXY $http_proxy $https_proxy $ALL_PROXY $NO_PROXY").Stdout; strings.Count(env, "http://127.0.0.1:3128") != 5 || !strings.Contains(env, "localhost,127.0.0.1,::1") {
		t.Errorf("proxy environment: %q", env)
	}
	mustExec(t, eng, sb.ID, "cat >/tmp/ca.pem <<'EOF'\n"+caPEM+"EOF")

	hint := "to allow it, a person adds \"127.0.0.2:" + strconv.Itoa(other) + "\" to network.allow_domains"
	for _, tc := range []struct{ name, url, want string }{
		{"plain", fmt.Sprintf("http://127.0.0.2:%d/hello", plain), "200 plain /hello"},
		{"tls", fmt.Sprintf("https://127.0.0.2:%d/secret", secure), "200 tls /secret"},
		{"port no entry names", fmt.Sprintf("http://127.0.0.2:%d/", other), "403 mcp-sandbox refused 127.0.0.2:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := fetch(t, eng, sb.ID, tc.url)
			if !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q…", got, tc.want)
			}
			if strings.HasPrefix(tc.want, "403") && !strings.Contains(got, hint) {
				t.Errorf("403 %q does not say %q", got, hint)
			}
		})
	}
	t.Run("after the agent restarts", func(t *testing.T) { checkAgentRestart(t, eng, sb.ID, plain) })
	t.Run("pip", func(t *testing.T) { checkPip(t, eng, sb.ID, index, entry(plain)) })

	n := eng.Network(sb.ID)
	if n.Mode != sandbox.NetworkAllowlist || !slices.Equal(n.Allowed, allowed) || n.Stats == nil {
		t.Fatalf("network: %+v", n)
	}
	if n.Stats.BytesIn == 0 || n.Stats.BytesOut == 0 || len(n.Stats.RefusedHosts) != 1 || n.Stats.RefusedHosts[0].Host != entry(other) || n.Stats.RefusedHosts[0].Count != 1 {
		t.Errorf("stats: %+v", *n.Stats)
	}
	if m := eng.Network(none.ID); m.Mode != sandbox.NetworkNone || m.Stats != nil {
		t.Errorf("mode none: %+v", m)
	}
	checkNetworkAudit(t, te.st, sb.ID, plain, other)
}

// checkNetworkAudit finds the plain request, allowed, and the refused one
// in the audit log.
func checkNetworkAudit(t *testing.T, st *state.Store, id string, plain, other int) {
	t.Helper()
	entries, err := st.ReadAudit(200)
	if err != nil {
		t.Fatal(err)
	}
	var sawPlain, sawRefused bool
	for _, e := range entries {
		if e.Tool != "network" || e.SandboxID != id || e.Network == nil || e.Network.Host != "127.0.0.2" {
			continue
		}
		switch n := e.Network; {
		case n.Port == plain && n.Allowed && n.BytesIn > 0 && n.BytesOut > 0 && n.Status == 200:
			sawPlain = true
		case n.Port == other && !n.Allowed && n.Reason != "" && n.Status == 403:
			sawRefused = true
		}
	}
	if !sawPlain || !sawRefused {
		t.Errorf("audit log: allowed plain request %v, refused one %v; entries:\n%+v", sawPlain, sawRefused, entries)
	}
}

// indexHandler is a PyPI-style simple index holding one wheel.
func indexHandler(whl string, wheel []byte) http.Handler {
	name := strings.SplitN(whl, "-", 2)[0]
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/simple/" + name + "/":
			fmt.Fprintf(w, `<html><body><a href="/files/%s">%s</a></body></html>`, whl, whl)
		case "/files/" + whl:
			w.Header().Set("Content-Type", "application/octet-stream")
			_, _ = w.Write(wheel)
		default:
			http.NotFound(w, r)
		}
	})
}

// TestAllowlistRunCodeDefault: run_code without a sandbox follows
// network.default = "allowlist", and its one-shot sandbox reaches the
// config's entries (it named none of its own) through the proxy.
func TestAllowlistRunCodeDefault(t *testing.T) {
	t.Parallel()
	port := hostServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "one-shot %s", r.URL.Path)
	}), nil)
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Network.Default = sandbox.NetworkAllowlist
		c.Network.AllowDomains = []string{"127.0.0.2:" + strconv.Itoa(port)}
	})
	code := fmt.Sprintf("import urllib.request\nprint(urllib.request.urlopen('http://127.0.0.2:%d/x', timeout=20).read().decode())", port)
	res, err := eng.RunCode(t.Context(), sandbox.RunCodeRequest{Language: "python", Code: code})
	if err != nil || !strings.Contains(res.Stdout, "one-shot /x") {
		t.Fatalf("run_code: %v\n%s\n%s", err, res.Stdout, res.Stderr)
	}
}

// checkAgentRestart kills sandbox id's agent from inside; the next
// command starts a new one (its pid differs), which listens again.
func checkAgentRestart(t *testing.T, eng *sandbox.Engine, id string, plain int) {
	t.Helper()
	// The agent dies (its command with it); the next command starts
	// a new one, which listens again.
	const agents = `for p in /proc/[0-9]*; do grep -qs 'mcp-sandbox-agen[t]-' $p/cmdline && echo ${p#/proc/}; done`
	before := mustExec(t, eng, id, agents).Stdout
	_, _ = eng.Exec(t.Context(), id, sandbox.ExecRequest{Command: "kill -9 $(" + agents + "); sleep 5"})
	want := "200 plain /again"
	got := ""
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline) && got != want; {
		got = fetch(t, eng, id, fmt.Sprintf("http://127.0.0.2:%d/again", plain))
	}
	if got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	if after := mustExec(t, eng, id, agents).Stdout; before == "" || after == before {
		t.Errorf("the agent was not restarted: pid %q, then %q", before, after)
	}
}

// checkPip installs a tiny wheel from the index on 127.0.0.2 in sandbox
// id, which has its entry, and fails to in a sandbox with only other.
func checkPip(t *testing.T, eng *sandbox.Engine, id string, index int, other string) {
	t.Helper()
	pip := "PIP_BREAK_SYSTEM_PACKAGES=1 python3 -m pip install --no-input --disable-pip-version-check --target /workspace/pk " +
		fmt.Sprintf("--index-url http://127.0.0.2:%d/simple/ --trusted-host 127.0.0.2 mcpsbxtiny", index)
	res := mustExec(t, eng, id, pip+" && python3 -c 'import sys; sys.path.insert(0, \"/workspace/pk\"); import mcpsbxtiny; print(mcpsbxtiny.HELLO)'")
	if res.ExitCode != 0 || !strings.Contains(res.Stdout, "hello from mcpsbxtiny") {
		t.Errorf("pip install with the entry: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
	without := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Network: sandbox.NetworkAllowlist, AllowDomains: []string{other}})
	res = mustExec(t, eng, without.ID, strings.Replace(pip, "install", "install -vv --retries 0 --timeout 10", 1))
	if res.ExitCode == 0 || !strings.Contains(res.Stdout+res.Stderr, "403 Client Error") {
		t.Errorf("pip install without the entry: exit %d\n%s\n%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

// floodPy opens N refused connections to the proxy, one after another,
// and prints how many were answered 403.
const floodPy = `
import socket, sys
n = int(sys.argv[1]); refused = 0
for i in range(n):
    s = socket.create_connection(("127.0.0.1", 3128), timeout=20)
    s.sendall(b"CONNECT 127.0.0.2:1 HTTP/1.1\r\nHost: 127.0.0.2:1\r\n\r\n")
    if s.recv(64).startswith(b"HTTP/1.1 403"):
        refused += 1
    s.close()
print(refused)
`

// TestAllowlistAuditFlood: a program that opens connection after refused
// connection cannot fill the audit log (which keeps a bounded size, so it
// would push every tool call's record out): past a burst its lines are
// counted, not written, and the line the sandbox's stop writes says how
// many, so written and counted add up to every connection.
func TestAllowlistAuditFlood(t *testing.T) {
	t.Parallel()
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Network: sandbox.NetworkAllowlist})
	const n = 300
	res := mustExec(t, eng, sb.ID, "cat >/tmp/flood.py <<'EOF'\n"+floodPy+"\nEOF\npython3 /tmp/flood.py "+strconv.Itoa(n))
	if got := strings.TrimSpace(res.Stdout); got != strconv.Itoa(n) {
		t.Fatalf("refused connections: %q, want %d (stderr %s)", got, n, res.Stderr)
	}
	if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
		t.Fatal(err)
	}
	entries, err := te.st.ReadAudit(1000)
	if err != nil {
		t.Fatal(err)
	}
	written, counted, closing := 0, 0, 0
	for _, e := range entries {
		if e.Tool != "network" || e.SandboxID != sb.ID {
			continue
		}
		if e.Network != nil {
			written++
		} else if strings.HasPrefix(e.Summary, "proxy closed") {
			closing++
		}
		var d int
		if _, after, ok := strings.Cut(e.Summary, "; "); ok {
			fmt.Sscanf(after, "%d connections before this were not logged", &d)
		}
		counted += d
	}
	if written > 70 || closing != 1 || written+counted != n {
		t.Errorf("audit lines: %d written, %d counted as not written, %d closing lines; want at most 70 written, one closing line, and %d in all", written, counted, closing, n)
	}
}
