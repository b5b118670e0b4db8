package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hostServer is an HTTP server on 127.0.0.2 (loopback, so reachable only
// through an entry naming its address and port) that answers with what it
// saw.
func hostServer(t *testing.T, tls bool) (*httptest.Server, int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("no 127.0.0.2 on this host: %v", err)
	}
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var names []string
		for k := range r.Header {
			names = append(names, k)
		}
		fmt.Fprintf(w, "host=%s path=%s headers=%s", r.Host, r.URL.Path, strings.Join(names, ","))
	}))
	ts.Listener.Close()
	ts.Listener = ln
	if tls {
		ts.StartTLS()
	} else {
		ts.Start()
	}
	t.Cleanup(ts.Close)
	return ts, ln.Addr().(*net.TCPAddr).Port
}

// proxyListener serves p on a loopback listener, one Serve per accepted
// connection, as the agent's streams will; it returns the address and a
// count of Serve calls still running.
func proxyListener(t *testing.T, p *Proxy) (string, *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var running atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() {
		cancel()
		ln.Close()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			running.Add(1)
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer running.Add(-1)
				p.Serve(ctx, c)
			}()
		}
	}()
	return ln.Addr().String(), &running
}

// records collects audit records.
type records struct {
	mu  sync.Mutex
	all []Record
}

func (r *records) add(rec Record) {
	r.mu.Lock()
	r.all = append(r.all, rec)
	r.mu.Unlock()
}

func (r *records) list() []Record {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Record(nil), r.all...)
}

// rawRequest sends head on a new connection to the proxy and returns the
// status and body of the answer.
func rawRequest(t *testing.T, proxy, head string) (int, string) {
	t.Helper()
	c, err := net.Dial("tcp", proxy)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(15 * time.Second))
	if _, err := io.WriteString(c, head); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil {
		t.Fatalf("reading the answer to %q: %v", head, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// fakeResolver answers from a table; answers[i] is the i-th lookup's.
type fakeResolver struct {
	mu      sync.Mutex
	calls   int
	answers map[string][][]netip.Addr
}

func (r *fakeResolver) LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	as := r.answers[host]
	if len(as) == 0 {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	a := as[0]
	if len(as) > 1 {
		r.answers[host] = as[1:]
	}
	return a, nil
}

func (r *fakeResolver) count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls
}

// recordingDialer dials for real and records each address it was given.
type recordingDialer struct {
	mu    sync.Mutex
	addrs []string
	d     net.Dialer
	fail  bool
}

func (d *recordingDialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	d.addrs = append(d.addrs, addr)
	fail := d.fail
	d.mu.Unlock()
	if fail {
		return nil, fmt.Errorf("test dialer: %s not dialled", addr)
	}
	return d.d.DialContext(ctx, network, addr)
}

func (d *recordingDialer) dialled() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.addrs...)
}

func mustEntries(t *testing.T, list ...string) []Entry {
	t.Helper()
	es, err := ParseEntries(list)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %s: %s", within, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// netPipe is an in-memory connection pair, as a stream over the agent
// connection is: no deadlines, no half-close.
func netPipe(t *testing.T) (io.ReadWriteCloser, io.ReadWriteCloser) {
	t.Helper()
	a, b := net.Pipe()
	t.Cleanup(func() { a.Close(); b.Close() })
	return struct{ io.ReadWriteCloser }{a}, struct{ io.ReadWriteCloser }{b}
}
