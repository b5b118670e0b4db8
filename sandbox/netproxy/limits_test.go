package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// countingRWC counts what Serve reads from a connection.
type countingRWC struct {
	io.ReadWriteCloser
	read atomic.Int64
}

func (c *countingRWC) Read(b []byte) (int, error) {
	n, err := c.ReadWriteCloser.Read(b)
	c.read.Add(int64(n))
	return n, err
}

// serveAsync runs p.Serve on the server end of a pipe; done closes when
// it returns.
func serveAsync(ctx context.Context, p *Proxy, server io.ReadWriteCloser) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		p.Serve(ctx, server)
	}()
	return done
}

func waitDone(t *testing.T, done <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		t.Fatalf("Serve still running after 15 s: %s", what)
	}
}

// TestSlowloris: a client that sends its head a byte at a time, or
// nothing, is answered 408 and closed when HeadTimeout passes.
func TestSlowloris(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dribble bool
	}{{"dribble", true}, {"silent", false}} {
		t.Run(tc.name, func(t *testing.T) {
			var recs records
			p := New(Options{HeadTimeout: 300 * time.Millisecond, Audit: recs.add})
			client, server := netPipe(t)
			done := serveAsync(context.Background(), p, server)
			stop := make(chan struct{})
			defer close(stop)
			if tc.dribble {
				go func() {
					head := "GET http://pypi.org/ HTTP/1.1\r\nHost: pypi.org\r\nX-Slow: "
					for i := 0; ; i++ {
						select {
						case <-stop:
							return
						case <-time.After(20 * time.Millisecond):
						}
						if _, err := client.Write([]byte{head[i%len(head)]}); err != nil {
							return
						}
					}
				}()
			}
			resp, err := http.ReadResponse(bufio.NewReader(client), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != 408 || !strings.Contains(string(body), "did not arrive within 300ms") {
				t.Errorf("%d %q", resp.StatusCode, body)
			}
			waitDone(t, done, "slow client")
			if rs := recs.list(); len(rs) != 1 || rs[0].Status != 408 {
				t.Errorf("records %+v", rs)
			}
		})
	}
}

// TestHeaderTooLarge: an endless head is answered 431 after about
// MaxHeaderBytes, and no more than that (plus one read buffer) is read.
func TestHeaderTooLarge(t *testing.T) {
	p := New(Options{MaxHeaderBytes: 1024})
	client, server := netPipe(t)
	counted := &countingRWC{ReadWriteCloser: server}
	done := serveAsync(context.Background(), p, counted)
	go func() {
		io.WriteString(client, "GET http://pypi.org/ HTTP/1.1\r\n")
		line := "X-Big: " + strings.Repeat("a", 1000) + "\r\n"
		for i := 0; i < 1000; i++ {
			if _, err := io.WriteString(client, line); err != nil {
				return
			}
		}
	}()
	resp, err := http.ReadResponse(bufio.NewReader(client), nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 431 {
		t.Errorf("status %d", resp.StatusCode)
	}
	client.Close()
	waitDone(t, done, "large head")
	if n := counted.read.Load(); n > 1024+readBuf {
		t.Errorf("read %d bytes of a head limited to 1024 (+%d read ahead)", n, readBuf)
	}
}

// TestClientDoesNotRead: a refused client that never reads the answer
// does not hold Serve beyond WriteTimeout.
func TestClientDoesNotRead(t *testing.T) {
	p := New(Options{WriteTimeout: 200 * time.Millisecond})
	client, server := netPipe(t)
	done := serveAsync(context.Background(), p, server)
	if _, err := io.WriteString(client, "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	waitDone(t, done, "a client that does not read")
}

// TestFlood: 1,000 connections at once to one sandbox's proxy end in
// refusals (503 beyond max_connections, 408 for the ones held), every
// Serve returns, memory stays bounded, and meanwhile a request through
// another sandbox's proxy completes; the flooded one serves again once the
// held connections time out.
func TestFlood(t *testing.T) {
	_, port := hostServer(t, false)
	entries := mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port))
	flooded := New(Options{Entries: entries, HeadTimeout: 2 * time.Second})
	other := New(Options{Entries: entries})
	otherAddr, _ := proxyListener(t, other)
	floodedAddr, _ := proxyListener(t, flooded)

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)

	const n = 1000
	var wg sync.WaitGroup
	var status sync.Map // status code → *atomic.Int64
	var served sync.WaitGroup
	for i := 0; i < n; i++ {
		client, server := netPipe(t)
		served.Add(1)
		go func() {
			defer served.Done()
			flooded.Serve(context.Background(), server)
		}()
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := http.ReadResponse(bufio.NewReader(client), nil)
			code := 0
			if err == nil {
				code = resp.StatusCode
			}
			v, _ := status.LoadOrStore(code, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
		}()
	}
	var peak atomic.Int64
	watching := make(chan struct{})
	go func() {
		defer close(watching)
		for {
			o := int64(flooded.Stats().Open)
			if o > peak.Load() {
				peak.Store(o)
			}
			if v, ok := status.Load(408); ok && v.(*atomic.Int64).Load() > 0 {
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	eventually(t, 10*time.Second, "the flooded proxy holding max_connections", func() bool { return peak.Load() == DefaultMaxConns })

	// Another sandbox's proxy answers during the flood.
	if code, body := rawRequest(t, otherAddr, fmt.Sprintf("GET http://127.0.0.2:%d/during HTTP/1.1\r\nHost: x\r\n\r\n", port)); code != 200 || !strings.Contains(body, "path=/during") {
		t.Errorf("other proxy during the flood: %d %q", code, body)
	}
	var mid runtime.MemStats
	runtime.ReadMemStats(&mid)
	if grown := int64(mid.HeapAlloc) - int64(before.HeapAlloc); grown > 64<<20 {
		t.Errorf("heap grew by %d MB during the flood", grown>>20)
	}

	wg.Wait()
	served.Wait()
	<-watching
	count := func(code int) int64 {
		if v, ok := status.Load(code); ok {
			return v.(*atomic.Int64).Load()
		}
		return 0
	}
	// Every one was refused: 503 beyond the limit, 408 when held (more
	// than the limit's worth only if some started after others had
	// timed out, on a slow machine).
	if count(503)+count(408) != n || count(408) < DefaultMaxConns || count(503) < n/2 {
		t.Errorf("503: %d, 408: %d, other: %d; want about %d and %d", count(503), count(408), n-count(503)-count(408), n-DefaultMaxConns, DefaultMaxConns)
	}
	if peak.Load() > DefaultMaxConns {
		t.Errorf("%d connections open at once, above max_connections %d", peak.Load(), DefaultMaxConns)
	}
	if code, body := rawRequest(t, floodedAddr, fmt.Sprintf("GET http://127.0.0.2:%d/after HTTP/1.1\r\nHost: x\r\n\r\n", port)); code != 200 {
		t.Errorf("flooded proxy after the flood: %d %q", code, body)
	}
}

// TestAsk: a host on no list waits for one Ask shared by every connection
// that wants it, while other connections go on; the answer is kept.
func TestAsk(t *testing.T) {
	_, port := hostServer(t, false)
	release := make(chan struct{})
	var asks atomic.Int64
	ask := func(ctx context.Context, host string, p int) (Decision, error) {
		asks.Add(1)
		if host != "ask.example" || p != port {
			return Deny, fmt.Errorf("asked for %s:%d", host, p)
		}
		<-release
		return Allow, nil
	}
	res := &fakeResolver{answers: map[string][][]netip.Addr{"ask.example": {{netip.MustParseAddr("127.0.0.2")}}}}
	p := New(Options{Entries: mustEntries(t, fmt.Sprintf("127.0.0.2:%d", port)), Ask: ask, Resolver: res})
	proxy, _ := proxyListener(t, p)

	const waiting = 3
	codes := make(chan int, waiting)
	for i := 0; i < waiting; i++ {
		go func() {
			code, _ := rawRequest(t, proxy, fmt.Sprintf("GET http://ask.example:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port))
			codes <- code
		}()
	}
	eventually(t, 10*time.Second, "the connections waiting for the answer", func() bool { return p.Stats().Open == waiting })
	if code, _ := rawRequest(t, proxy, fmt.Sprintf("GET http://127.0.0.2:%d/ HTTP/1.1\r\nHost: x\r\n\r\n", port)); code != 200 {
		t.Errorf("a listed host waited for the answer: %d", code)
	}
	close(release)
	for i := 0; i < waiting; i++ {
		if code := <-codes; code != 200 {
			t.Errorf("after Allow: %d", code)
		}
	}
	if n := asks.Load(); n != 1 {
		t.Errorf("%d asks, want 1", n)
	}

	// Denied: refused, and not asked again.
	p2 := New(Options{Ask: func(ctx context.Context, host string, port int) (Decision, error) { asks.Add(1); return Deny, nil }})
	proxy2, _ := proxyListener(t, p2)
	for i := 0; i < 2; i++ {
		if code, body := rawRequest(t, proxy2, "CONNECT no.example:443 HTTP/1.1\r\n\r\n"); code != 403 || !strings.Contains(body, "no person allowed it") {
			t.Errorf("denied: %d %q", code, body)
		}
	}
	if n := asks.Load(); n != 2 {
		t.Errorf("%d asks in all, want 2", n)
	}
	// Addresses are never asked about.
	if code, _ := rawRequest(t, proxy2, "CONNECT 10.0.0.1:443 HTTP/1.1\r\n\r\n"); code != 403 || asks.Load() != 2 {
		t.Errorf("an address: %d, asks %d", code, asks.Load())
	}
}

// TestRefusedHostsBounded: the refused hosts kept for sandbox_list are
// the most recent ones, with their counts, never more than the bound.
func TestRefusedHostsBounded(t *testing.T) {
	p := New(Options{MaxRefusedHosts: 3})
	proxy, _ := proxyListener(t, p)
	for _, h := range []string{"a.example", "b.example", "a.example", "c.example", "d.example", "c.example", "e.example"} {
		rawRequest(t, proxy, "CONNECT "+h+":443 HTTP/1.1\r\n\r\n")
	}
	st := p.Stats()
	want := []HostCount{{"e.example:443", 1}, {"c.example:443", 2}, {"d.example:443", 1}}
	if fmt.Sprint(st.RefusedHosts) != fmt.Sprint(want) || st.Refused != 7 {
		t.Errorf("refused %+v (%d), want %+v (7)", st.RefusedHosts, st.Refused, want)
	}
}

// pipeDialer connects every dial to an in-memory host played by serve.
type pipeDialer struct{ serve func(net.Conn) }

func (d pipeDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	a, b := net.Pipe()
	go d.serve(b)
	return a, nil
}

// TestResponseHeadTooLarge: an allowed host that sends an endless
// response head is cut off after maxResponseHead (plus a read buffer);
// the client gets 502 and the proxy holds no more than that.
func TestResponseHeadTooLarge(t *testing.T) {
	var written atomic.Int64
	host := func(c net.Conn) {
		defer c.Close()
		br := bufio.NewReader(c)
		if _, err := http.ReadRequest(br); err != nil {
			return
		}
		line := []byte("X-Endless: " + strings.Repeat("a", 4000) + "\r\n")
		if _, err := io.WriteString(c, "HTTP/1.1 200 OK\r\n"); err != nil {
			return
		}
		for written.Load() < 64<<20 {
			n, err := c.Write(line)
			written.Add(int64(n))
			if err != nil {
				return
			}
		}
	}
	p := New(Options{Entries: mustEntries(t, "10.9.8.7:80"), Dialer: pipeDialer{host}})
	proxy, _ := proxyListener(t, p)
	code, body := rawRequest(t, proxy, "GET http://10.9.8.7/ HTTP/1.1\r\nHost: x\r\n\r\n")
	if code != 502 || !strings.Contains(body, "no valid HTTP response") {
		t.Errorf("%d %q", code, body)
	}
	if n := written.Load(); n > maxResponseHead+64<<10 {
		t.Errorf("the proxy read %d bytes of a response head limited to %d", n, maxResponseHead)
	}
}

// TestAskOnlyWhatCanBeGranted: a name whose every address is restricted
// is refused without a question (a yes could not open it), saying why;
// a person's no is told as theirs.
func TestAskOnlyWhatCanBeGranted(t *testing.T) {
	var asks atomic.Int64
	res := &fakeResolver{answers: map[string][][]netip.Addr{
		"localhost":  {{netip.MustParseAddr("127.0.0.1")}},
		"no.example": {{netip.MustParseAddr("93.184.216.34")}},
	}}
	p := New(Options{Resolver: res, Ask: func(ctx context.Context, host string, port int) (Decision, error) {
		asks.Add(1)
		return Declined, nil
	}})
	proxy, _ := proxyListener(t, p)
	if code, body := rawRequest(t, proxy, "CONNECT localhost:8086 HTTP/1.1\r\n\r\n"); code != 403 || !strings.Contains(body, "not asked: it resolves to 127.0.0.1, a loopback address") {
		t.Errorf("a name resolving to loopback: %d %q", code, body)
	}
	if n := asks.Load(); n != 0 {
		t.Errorf("asked %d times about a name a yes could not open", n)
	}
	if code, body := rawRequest(t, proxy, "CONNECT no.example:443 HTTP/1.1\r\n\r\n"); code != 403 || !strings.Contains(body, "the person asked declined it") {
		t.Errorf("declined: %d %q", code, body)
	}
}

func TestRisk(t *testing.T) {
	for in, want := range map[string]string{
		"pypi.org":           "",
		"*.evil.test":        "a wildcard",
		"127.0.0.1:18099":    "a loopback address",
		"169.254.169.254:80": "a cloud metadata address",
		"172.17.0.1:2375":    "a private address",
		"93.184.216.34:443":  "an IP address",
	} {
		e, err := ParseEntry(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := Risk(e); (want == "") != (got == "") || !strings.Contains(got, want) {
			t.Errorf("Risk(%s) = %q, want %q", in, got, want)
		}
	}
}
