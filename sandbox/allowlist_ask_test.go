package sandbox

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// TestProxyAskSeam: a host no entry allows is put to Options.Ask with the
// sandbox's id, language and client and the host and port; Ask is never
// called while network.ask is false, and a nil Ask refuses. Each refusal
// answers 403.
func TestProxyAskSeam(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ask     bool // network.ask
		seam    bool // Options.Ask set
		asked   bool
		because string
	}{
		{"asked, a person refuses", true, true, true, "no person allowed it"},
		{"network.ask false", false, true, false, "network.ask is false"},
		{"no seam", true, false, false, "not on this sandbox's allow list"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var got []AskRequest
			o := Options{Backend: fake.New(), Config: config.Static(askConfig(tc.ask))}
			if tc.seam {
				o.Ask = func(ctx context.Context, req AskRequest) (netproxy.Decision, error) {
					mu.Lock()
					got = append(got, req)
					mu.Unlock()
					return netproxy.Deny, nil
				}
			}
			e := NewEngine(o)
			t.Cleanup(func() { _ = e.Close(context.Background()) })
			sb := &Sandbox{ID: "sb1", Language: "python", Client: "Claude Desktop", Network: NetworkAllowlist}
			sp := e.newProxy(sb)
			defer sp.Close()
			status, body := connectThrough(t, sp, "example.com:443")
			if status != http.StatusForbidden || !strings.Contains(body, tc.because) {
				t.Errorf("answer %d %q, want 403 saying %q", status, body, tc.because)
			}
			mu.Lock()
			defer mu.Unlock()
			want := AskRequest{SandboxID: "sb1", Language: "python", Client: "Claude Desktop", Host: "example.com", Port: 443}
			if tc.asked != (len(got) == 1) || tc.asked && got[0] != want {
				t.Errorf("asked %+v, want asked=%v (%+v)", got, tc.asked, want)
			}
			if st := sp.Stats(); st.Refused != 1 {
				t.Errorf("refused %d", st.Refused)
			}
		})
	}
}

func askConfig(ask bool) *config.Config {
	c := config.Default()
	c.Network.Ask = ask
	return c
}

// connectThrough sends CONNECT hostport to sp over a pipe and reads the
// answer.
func connectThrough(t *testing.T, sp *netglue.Proxy, hostport string) (int, string) {
	t.Helper()
	client, server := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		sp.Serve(server)
	}()
	defer func() { client.Close(); <-done }()
	if _, err := client.Write([]byte("CONNECT " + hostport + " HTTP/1.1\r\nHost: " + hostport + "\r\n\r\n")); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	return resp.StatusCode, string(b)
}

// TestPlanAsking: allow_domains the config does not cover are put to a
// person, once per create with the whole list, only while network.ask is
// on and the engine has a way to ask; only an Allow lets them in, and
// entries the config covers are never asked about.
func TestPlanAsking(t *testing.T) {
	for _, tc := range []struct {
		name    string
		ask     bool
		seam    bool
		answer  netproxy.Decision
		domains []string
		asked   bool
		ok      bool
	}{
		{"covered, nobody asked", true, true, netproxy.Deny, []string{"example.com"}, false, true},
		{"a person allows", true, true, netproxy.Allow, []string{"pypi.org", "files.example"}, true, true},
		{"a person denies", true, true, netproxy.Deny, []string{"pypi.org"}, true, false},
		{"network.ask false", false, true, netproxy.Allow, []string{"pypi.org"}, false, false},
		{"no seam", true, false, netproxy.Allow, []string{"pypi.org"}, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got [][]string
			c := askConfig(tc.ask)
			c.Network.AllowDomains = []string{"example.com"}
			o := Options{Backend: fake.New(), Config: config.Static(c)}
			if tc.seam {
				o.AskEntries = func(_ context.Context, language string, entries []string) (netproxy.Decision, error) {
					got = append(got, append([]string{language}, entries...))
					return tc.answer, nil
				}
			}
			e := NewEngine(o)
			t.Cleanup(func() { _ = e.Close(context.Background()) })
			cfg := e.cfg.Current()
			p, err := e.planAsking(context.Background(), cfg, CreateRequest{Language: "python", Network: NetworkAllowlist, AllowDomains: tc.domains})
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok=%v", err, tc.ok)
			}
			if tc.ok && !slices.Equal(p.AllowDomains, tc.domains) {
				t.Errorf("plan's allow_domains %q, want %q", p.AllowDomains, tc.domains)
			}
			if tc.asked != (len(got) == 1) || tc.asked && !slices.Equal(got[0], append([]string{"python"}, tc.domains...)) {
				t.Errorf("asked %q, want asked=%v about %q", got, tc.asked, tc.domains)
			}
			if !tc.ok && !errors.Is(err, ErrPolicy) {
				t.Errorf("refusal %v is not ErrPolicy", err)
			}
		})
	}
}
