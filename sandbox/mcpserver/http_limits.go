package mcpserver

import (
	"container/list"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// Every phase of an HTTP request is timed and the connections are capped,
// so that a local process without the token cannot take the server's
// file descriptors or memory from its real clients:
//
//   - headers: httpReadHeaderTimeout (http.Server);
//   - the token is checked from the headers alone, and a refusal closes
//     the connection (refuse), so no unread body is drained;
//   - body: httpBodyTimeout from the end of the headers, cleared once the
//     body is read, so that a long call or an event stream is never cut;
//   - connections: at most maxHTTPConns open, maxHTTPConnsPerAddr from one
//     address; a connection over a cap closes the oldest one that never
//     carried the token (loopback clients all share 127.0.0.1, and the
//     newest is a real client's more often than not), or itself when
//     every open one carries the token.
const (
	maxHTTPConns        = 512
	maxHTTPConnsPerAddr = 256
)

// httpBodyTimeout is how long a request body may take (a variable for
// tests).
var httpBodyTimeout = 30 * time.Second

// refuse answers a refused request and closes the connection at once: Go's
// server would otherwise read up to 256 KiB of the unread body, however
// slowly it comes, before sending the answer (for a keep-alive connection)
// or before closing (when it closes anyway).
func refuse(w http.ResponseWriter, msg string, code int) {
	w.Header().Set("Connection", "close")
	_ = http.NewResponseController(w).SetReadDeadline(time.Now())
	http.Error(w, msg, code)
}

// timeBody gives the request body httpBodyTimeout to arrive. The deadline
// is the connection's: it is cleared when the body ends, as the connection
// then waits for the client to go away for as long as the call runs. A
// body never read to its end keeps it, which also bounds what Go's server
// reads of it after the handler.
func timeBody(w http.ResponseWriter, r *http.Request) {
	if r.ContentLength == 0 || r.Body == nil || r.Body == http.NoBody {
		return
	}
	rc := http.NewResponseController(w)
	if rc.SetReadDeadline(time.Now().Add(httpBodyTimeout)) != nil {
		return // not a connection that takes deadlines (a test recorder)
	}
	r.Body = &timedBody{ReadCloser: r.Body, rc: rc}
}

type timedBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	once sync.Once
}

func (b *timedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.once.Do(func() { _ = b.rc.SetReadDeadline(time.Time{}) })
	}
	return n, err
}

// connCap is a listener that caps the connections open (see above).
type connCap struct {
	net.Listener
	max, perAddr int

	mu     sync.Mutex
	open   *list.List // of *cappedConn, oldest first
	byAddr map[string]int
}

type connKey struct{}

func capConns(ln net.Listener, max, perAddr int) *connCap {
	return &connCap{Listener: ln, max: max, perAddr: perAddr, open: list.New(), byAddr: map[string]int{}}
}

// Accept returns the next connection, having closed one when a cap is
// reached.
func (l *connCap) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
	cc := &cappedConn{Conn: c, l: l, host: host}
	l.mu.Lock()
	cc.at = l.open.PushBack(cc)
	l.byAddr[host]++
	var victim *cappedConn
	switch {
	case l.byAddr[host] > l.perAddr:
		victim = l.oldestUntrustedLocked(host)
	case l.open.Len() > l.max:
		victim = l.oldestUntrustedLocked("")
	}
	l.mu.Unlock()
	if victim != nil {
		victim.Close() // may be cc itself: its server then ends at once
	}
	return cc, nil
}

// oldestUntrustedLocked is the oldest connection from host ("": any) that
// never carried the token; the new one is such a connection, so it goes
// when all the others carried the token.
func (l *connCap) oldestUntrustedLocked(host string) *cappedConn {
	for e := l.open.Front(); e != nil; e = e.Next() {
		c := e.Value.(*cappedConn)
		if !c.trusted && (host == "" || c.host == host) {
			return c
		}
	}
	return nil
}

// withConn is http.Server's ConnContext: the guard marks the connection
// when a request on it carries the token.
func withConn(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*cappedConn); ok {
		return context.WithValue(ctx, connKey{}, cc)
	}
	return ctx
}

// trustConn marks the request's connection as one that carried the token.
func trustConn(r *http.Request) {
	if cc, ok := r.Context().Value(connKey{}).(*cappedConn); ok {
		cc.l.mu.Lock()
		cc.trusted = true
		cc.l.mu.Unlock()
	}
}

type cappedConn struct {
	net.Conn
	l       *connCap
	host    string
	at      *list.Element // nil once closed
	trusted bool          // guarded by l.mu
}

func (c *cappedConn) Close() error {
	c.l.mu.Lock()
	if c.at != nil {
		c.l.open.Remove(c.at)
		c.at = nil
		if c.l.byAddr[c.host]--; c.l.byAddr[c.host] == 0 {
			delete(c.l.byAddr, c.host)
		}
	}
	c.l.mu.Unlock()
	return c.Conn.Close()
}
