package netglue

import (
	"bufio"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

type fakeListen struct {
	mu           sync.Mutex
	gone, closed bool
}

func (f *fakeListen) Gone() bool { f.mu.Lock(); defer f.mu.Unlock(); return f.gone }
func (f *fakeListen) Close()     { f.mu.Lock(); defer f.mu.Unlock(); f.closed = true }

// TestProxyListenAndClose: the proxy listens through the newest listen,
// hands back the one it replaced, and Close closes it; a listen given to
// a closed proxy is closed at once.
func TestProxyListenAndClose(t *testing.T) {
	sp := NewProxy(ProxyOptions{})
	if sp.Listening() {
		t.Fatal("listening before any listen")
	}
	a, b := &fakeListen{}, &fakeListen{}
	if old := sp.Listen(a); old != nil {
		t.Fatalf("first listen replaced %v", old)
	}
	if old := sp.Listen(b); old != a || !sp.Listening() {
		t.Fatalf("second listen replaced %v, listening %v", old, sp.Listening())
	}
	b.mu.Lock()
	b.gone = true
	b.mu.Unlock()
	if sp.Listening() {
		t.Error("listening through a listen that is gone")
	}
	sp.Close()
	if !b.closed || a.closed {
		t.Errorf("Close closed a=%v b=%v, want b only", a.closed, b.closed)
	}
	c := &fakeListen{}
	sp.Listen(c)
	if !c.closed {
		t.Error("a closed proxy kept a new listen")
	}
}

// TestProxyAuditsWithinBudget: every connection is logged and heard; past
// the budget's burst, Audit hears line=false, and Close tells Closed how
// many lines were kept out.
func TestProxyAuditsWithinBudget(t *testing.T) {
	var lines, heard, closedWith int
	now := time.Unix(1e9, 0)
	sp := NewProxy(ProxyOptions{
		Now: func() time.Time { return now },
		Audit: func(r netproxy.Record, line bool, dropped int) {
			heard++
			if line {
				lines++
			}
		},
		Closed: func(d int) { closedWith = d },
	})
	n := auditBurst + 3
	for range n {
		client, server := net.Pipe()
		done := make(chan struct{})
		go func() { defer close(done); sp.Serve(server) }()
		_, _ = client.Write([]byte("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"))
		if resp, err := http.ReadResponse(bufio.NewReader(client), nil); err != nil || resp.StatusCode != http.StatusForbidden {
			t.Fatalf("answer %v %v, want 403", resp, err)
		}
		client.Close()
		<-done
	}
	sp.Close()
	if heard != n || lines != auditBurst || closedWith != 3 || sp.Stats().Refused != int64(n) {
		t.Errorf("heard %d, lines %d, closed with %d, refused %d; want %d, %d, 3, %d", heard, lines, closedWith, sp.Stats().Refused, n, auditBurst, n)
	}
	if sp.Log() == "" {
		t.Error("no connection log")
	}
}
