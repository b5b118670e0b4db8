package netproxy

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPlainHTTP: a host server on 127.0.0.2 is reached over plain HTTP
// only through an entry naming its address and port exactly.
func TestPlainHTTP(t *testing.T) {
	_, port := hostServer(t, false)
	var recs records
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port)), Audit: recs.add})
	proxy, _ := proxyListener(t, p)

	status, body := rawRequest(t, proxy, fmt.Sprintf("GET http://127.0.0.2:%d/hello HTTP/1.1\r\nHost: evil.example\r\nProxy-Authorization: x\r\nProxy-Connection: keep-alive\r\nX-Drop: 1\r\nConnection: X-Drop\r\nX-Keep: 1\r\n\r\n", port))
	if status != 200 || !strings.Contains(body, fmt.Sprintf("host=127.0.0.2:%d path=/hello", port)) {
		t.Fatalf("allowed request: %d %q", status, body)
	}
	for _, h := range []string{"Proxy-Authorization", "Proxy-Connection", "X-Drop"} {
		if strings.Contains(body, h) {
			t.Errorf("the host saw %s: %q", h, body)
		}
	}
	if !strings.Contains(body, "X-Keep") {
		t.Errorf("the host did not see X-Keep: %q", body)
	}
	// The answer reaches the client before the proxy counts and audits it.
	eventually(t, 5*time.Second, "the request's record", func() bool { return len(recs.list()) == 1 })
	st := p.Stats()
	if st.Allowed != 1 || st.BytesIn == 0 || st.BytesOut == 0 || st.Refused != 0 {
		t.Errorf("stats %+v", st)
	}
	rs := recs.list()
	if len(rs) != 1 || !rs[0].Allowed || rs[0].Host != "127.0.0.2" || rs[0].Port != port || rs[0].Addr != fmt.Sprintf("127.0.0.2:%d", port) || rs[0].BytesIn == 0 || rs[0].Status != 200 {
		t.Errorf("records %+v", rs)
	}

	// Another port of the same address is not named: refused.
	status, body = rawRequest(t, proxy, fmt.Sprintf("GET http://127.0.0.2:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port+1))
	want := fmt.Sprintf("mcp-sandbox refused 127.0.0.2:%d: an IP address is reached only through an entry naming it and its port exactly; to allow it, a person adds \"127.0.0.2:%d\" to network.allow_domains", port+1, port+1)
	if status != 403 || !strings.HasPrefix(body, want) || strings.Count(body, "\n") != 1 {
		t.Errorf("refused request: %d %q, want 403 %q…", status, body, want)
	}
}

// TestAddressSpellings: every spelling of an address is refused unless an
// entry names that address and port, and allowed (to that very address)
// when one does.
func TestAddressSpellings(t *testing.T) {
	_, port := hostServer(t, false)
	spellings := []string{
		"127.0.0.2", "2130706434", "0177.0.0.2", "0x7f000002", "0x7f.0.0.2", "127.2", "127.0.2",
		"017700000002", "127.0.0.2.", "[::ffff:127.0.0.2]", "[::ffff:7f00:2]",
	}
	d := &recordingDialer{}
	allowed := New(Options{Entries: mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port)), Dialer: d})
	refused := New(Options{Entries: mustEntries(t, "127.0.0.2:1", "localhost", "*.localhost.example")})
	ap, _ := proxyListener(t, allowed)
	rp, _ := proxyListener(t, refused)
	for _, s := range spellings {
		t.Run(s, func(t *testing.T) {
			head := fmt.Sprintf("GET http://%s:%d/x HTTP/1.1\r\nHost: x\r\n\r\n", s, port)
			if status, body := rawRequest(t, rp, head); status != 403 || !strings.Contains(body, fmt.Sprintf("refused 127.0.0.2:%d", port)) {
				t.Errorf("not named: %d %q", status, body)
			}
			connect := fmt.Sprintf("CONNECT %s:%d HTTP/1.1\r\nHost: x\r\n\r\n", s, port)
			if status, _ := rawRequest(t, rp, connect); status != 403 {
				t.Errorf("CONNECT not named: %d", status)
			}
			if status, body := rawRequest(t, ap, head); status != 200 || !strings.Contains(body, "path=/x") {
				t.Errorf("named: %d %q", status, body)
			}
		})
	}
	for _, a := range d.dialled() {
		if a != fmt.Sprintf("127.0.0.2:%d", port) {
			t.Errorf("dialled %s", a)
		}
	}
}

// TestConnectTLS: a CONNECT tunnel carries TLS untouched to a name that
// resolves (once, on the host) to 127.0.0.2.
func TestConnectTLS(t *testing.T) {
	ts, port := hostServer(t, true)
	res := &fakeResolver{answers: map[string][][]netip.Addr{"example.com": {{netip.MustParseAddr("127.0.0.2")}}}}
	var recs records
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("example.com:%d", port), fmt.Sprintf("127.0.0.2:%d", port)), Resolver: res, Audit: recs.add})
	proxy, _ := proxyListener(t, p)

	client := proxiedClient(t, proxy, ts.Client().Transport.(*http.Transport).TLSClientConfig)
	resp, err := client.Get(fmt.Sprintf("https://example.com:%d/tls", port))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), "path=/tls") {
		t.Fatalf("%d %q", resp.StatusCode, b)
	}
	client.CloseIdleConnections()
	eventually(t, 5*time.Second, "the tunnel's record", func() bool { return len(recs.list()) == 1 })
	if r := recs.list()[0]; r.Method != "CONNECT" || !r.Allowed || r.Host != "example.com" || r.BytesIn < 500 || r.BytesOut < 100 {
		t.Errorf("record %+v", r)
	}

	// Without the address entry the name's loopback answer is refused.
	res.answers["example.com"] = [][]netip.Addr{{netip.MustParseAddr("127.0.0.2")}}
	p.SetEntries(mustEntries(t, fmt.Sprintf("example.com:%d", port)))
	status, body := rawRequest(t, proxy, fmt.Sprintf("CONNECT example.com:%d HTTP/1.1\r\n\r\n", port))
	if status != 403 || !strings.Contains(body, "resolves to 127.0.0.2, a loopback address") {
		t.Errorf("%d %q", status, body)
	}
	// A name on no list is refused before any lookup.
	before := res.count()
	status, body = rawRequest(t, proxy, "CONNECT other.example:443 HTTP/1.1\r\n\r\n")
	if status != 403 || !strings.Contains(body, "other.example:443: not on this sandbox's allow list") || !strings.Contains(body, `adds "other.example" to network.allow_domains`) || res.count() != before {
		t.Errorf("%d %q (lookups %d → %d)", status, body, before, res.count())
	}
}

// proxiedClient is an HTTP client that uses proxy for everything.
func proxiedClient(t *testing.T, proxy string, tlsConf *tls.Config) *http.Client {
	t.Helper()
	u, _ := url.Parse("http://" + proxy)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: tlsConf}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr, Timeout: 15 * time.Second}
}

// TestResolveOnce: the name is looked up once, and the dial goes to the
// checked address: a second, different answer (DNS rebinding) is never
// used.
func TestResolveOnce(t *testing.T) {
	_, port := hostServer(t, false)
	res := &fakeResolver{answers: map[string][][]netip.Addr{"rebind.example": {
		{netip.MustParseAddr("127.0.0.2")},
		{netip.MustParseAddr("169.254.169.254")},
		{netip.MustParseAddr("10.0.0.1")},
	}}}
	d := &recordingDialer{}
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("rebind.example:%d", port), fmt.Sprintf("127.0.0.2:%d", port)), Resolver: res, Dialer: d})
	proxy, _ := proxyListener(t, p)
	status, body := rawRequest(t, proxy, fmt.Sprintf("GET http://rebind.example:%d/r HTTP/1.1\r\nHost: rebind.example\r\n\r\n", port))
	if status != 200 || !strings.Contains(body, "path=/r") {
		t.Fatalf("%d %q", status, body)
	}
	if n := res.count(); n != 1 {
		t.Errorf("%d lookups, want 1", n)
	}
	if got := d.dialled(); len(got) != 1 || got[0] != fmt.Sprintf("127.0.0.2:%d", port) {
		t.Errorf("dialled %v", got)
	}
	// The next connection gets the rebound answer, and it is refused.
	status, body = rawRequest(t, proxy, fmt.Sprintf("GET http://rebind.example:%d/r HTTP/1.1\r\nHost: rebind.example\r\n\r\n", port))
	if status != 403 || !strings.Contains(body, "169.254.169.254, a cloud metadata address") {
		t.Errorf("%d %q", status, body)
	}
	if got := d.dialled(); len(got) != 1 {
		t.Errorf("dialled %v", got)
	}
}

// TestKeepAliveEachRequestChecked: the second request on one connection
// is judged on its own host.
func TestKeepAliveEachRequestChecked(t *testing.T) {
	_, port := hostServer(t, false)
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port))})
	proxy, _ := proxyListener(t, p)
	client := proxiedClient(t, proxy, nil)
	for i, u := range []string{fmt.Sprintf("http://127.0.0.2:%d/a", port), fmt.Sprintf("http://127.0.0.2:%d/b", port), fmt.Sprintf("http://127.0.0.3:%d/c", port)} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if want := 200; i == 2 {
			want = 403
			if resp.StatusCode != want {
				t.Errorf("%s: %d %q", u, resp.StatusCode, b)
			}
		} else if resp.StatusCode != want {
			t.Errorf("%s: %d %q", u, resp.StatusCode, b)
		}
	}
}

// TestAddressClasses: names resolving to each restricted class, and the
// addresses themselves, are refused; an entry naming the exact address
// and port lets the dial go to that address.
func TestAddressClasses(t *testing.T) {
	addrs := []string{"127.0.0.1", "::1", "0.0.0.0", "::", "10.0.0.1", "172.16.5.4", "192.168.0.1",
		"169.254.169.254", "fd00:ec2::254", "100.100.100.200", "100.64.1.1", "fe80::1", "fc00::5",
		"224.0.0.251", "ff02::fb", "::ffff:10.0.0.1", "64:ff9b::a9fe:a9fe", "168.63.129.16", "192.0.0.192"}
	for _, a := range addrs {
		t.Run(a, func(t *testing.T) {
			addr := netip.MustParseAddr(a)
			res := &fakeResolver{answers: map[string][][]netip.Addr{"name.example": {{addr}, {addr}}}}
			d := &recordingDialer{fail: true}
			p := New(Options{Entries: mustEntries(t, "name.example"), Resolver: res, Dialer: d})
			proxy, _ := proxyListener(t, p)
			lit := netip.AddrPortFrom(addr, 80).String()
			for _, head := range []string{
				"GET http://name.example/ HTTP/1.1\r\nHost: x\r\n\r\n",
				"GET http://" + lit + "/ HTTP/1.1\r\nHost: x\r\n\r\n",
				"CONNECT " + lit + " HTTP/1.1\r\n\r\n",
			} {
				if status, body := rawRequest(t, proxy, head); status != 403 {
					t.Errorf("%q: %d %q", head, status, body)
				}
			}
			if got := d.dialled(); len(got) != 0 {
				t.Errorf("dialled %v", got)
			}
			// Named exactly: the dial goes to that address (the test
			// dialer refuses it, so the answer is 502).
			p.SetEntries(mustEntries(t, "name.example", netip.AddrPortFrom(addr.Unmap(), 80).String()))
			want := netip.AddrPortFrom(addr.Unmap(), 80).String()
			if status, body := rawRequest(t, proxy, "GET http://name.example/ HTTP/1.1\r\nHost: x\r\n\r\n"); status != 502 || !strings.Contains(body, "could not reach") {
				t.Errorf("named: %d %q", status, body)
			}
			if got := d.dialled(); len(got) != 1 || got[0] != want {
				t.Errorf("dialled %v, want [%s]", got, want)
			}
		})
	}
}

// TestNotAProxyRequest: an origin-form request, an https absolute URI and
// a CONNECT without a port are refused with 400.
func TestNotAProxyRequest(t *testing.T) {
	p := New(Options{})
	proxy, _ := proxyListener(t, p)
	for _, head := range []string{
		"GET / HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
		"GET https://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\n\r\n",
		"CONNECT pypi.org HTTP/1.1\r\n\r\n",
		"CONNECT [::1 HTTP/1.1\r\n\r\n",
		"NOT HTTP\r\n\r\n",
	} {
		if status, body := rawRequest(t, proxy, head); status != 400 || !strings.HasPrefix(body, "mcp-sandbox") {
			t.Errorf("%q: %d %q", head, status, body)
		}
	}
}

// TestServeEndsWithContext: an open tunnel ends when the context does.
func TestServeEndsWithContext(t *testing.T) {
	_, port := hostServer(t, false)
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port))})
	client, server := netPipe(t)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.Serve(ctx, server); close(done) }()
	go io.WriteString(client, fmt.Sprintf("CONNECT 127.0.0.2:%d HTTP/1.1\r\n\r\n", port))
	buf := make([]byte, 64)
	if n, err := client.Read(buf); err != nil || !strings.Contains(string(buf[:n]), " 200 ") {
		t.Fatalf("%q %v", buf[:n], err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still running 10 s after its context ended")
	}
}

// TestZoneRefused: an IPv6 literal with a zone is refused whatever the
// entries say (no entry can name one).
func TestZoneRefused(t *testing.T) {
	p := New(Options{Entries: mustEntries(t, "[fe80::1]:80")})
	proxy, _ := proxyListener(t, p)
	for head, want := range map[string]int{
		"GET http://[fe80::1%25eth0]/ HTTP/1.1\r\nHost: x\r\n\r\n": 403,
		"CONNECT [fe80::1%25eth0]:80 HTTP/1.1\r\n\r\n":             403,
		"CONNECT [fe80::1%eth0]:80 HTTP/1.1\r\n\r\n":               400, // not even a valid request
	} {
		if status, body := rawRequest(t, proxy, head); status != want || want == 403 && !strings.Contains(body, "with a zone") {
			t.Errorf("%q: %d %q, want %d", head, status, body, want)
		}
	}
}

// TestLocalhostThroughTheRealResolver: with the host's own resolver, a
// name that resolves to loopback (localhost, from /etc/hosts) is refused
// even when an entry names it.
func TestLocalhostThroughTheRealResolver(t *testing.T) {
	_, port := hostServer(t, false)
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("localhost:%d", port))})
	proxy, _ := proxyListener(t, p)
	status, body := rawRequest(t, proxy, fmt.Sprintf("GET http://localhost:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port))
	if status != 403 || !strings.Contains(body, "a loopback address") || !strings.Contains(body, fmt.Sprintf(`adds "127.0.0.1:%d"`, port)) {
		t.Errorf("%d %q", status, body)
	}
}
