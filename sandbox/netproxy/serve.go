package netproxy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
)

// readBuf is the client reader's buffer; a head may exceed
// MaxHeaderBytes by this much (what was read ahead).
const readBuf = 4 << 10

// conn is one client connection being served.
type conn struct {
	p     *Proxy
	rwc   io.ReadWriteCloser
	lim   *headLimit
	br    *bufio.Reader
	start time.Time
}

// Serve handles one client connection until it ends, ctx ends, or a
// request is refused; it closes conn. It never blocks on a client that
// does not read or does not send for longer than the Options' timeouts,
// except while relaying an allowed connection (ended by ctx).
func (p *Proxy) Serve(ctx context.Context, rwc io.ReadWriteCloser) {
	defer rwc.Close()
	c := &conn{p: p, rwc: rwc, start: time.Now()}
	if p.open.Add(1) > int64(p.opts.MaxConns) {
		p.open.Add(-1)
		why := fmt.Sprintf("too many connections: this sandbox may have %d open at once (network.max_connections)", p.opts.MaxConns)
		c.answer(http.StatusServiceUnavailable, "mcp-sandbox: "+why)
		c.audit(Record{Reason: why, Status: http.StatusServiceUnavailable})
		return
	}
	defer p.open.Add(-1)
	defer context.AfterFunc(ctx, func() { rwc.Close() })()
	c.lim = &headLimit{r: rwc}
	c.br = bufio.NewReaderSize(c.lim, readBuf)
	for first := true; ; first = false {
		req, ok := c.readHead(first)
		if !ok {
			return
		}
		if req.Method == http.MethodConnect {
			c.tunnel(ctx, req)
			return
		}
		if !c.forward(ctx, req) {
			return
		}
	}
}

// headLimit counts what a request head reads, and stops at a limit.
type headLimit struct {
	r    io.Reader
	left atomic.Int64
	got  atomic.Int64
	hit  atomic.Bool
}

func (l *headLimit) Read(b []byte) (int, error) {
	left := l.left.Load()
	if left <= 0 {
		l.hit.Store(true)
		return 0, errors.New("request head too large")
	}
	if int64(len(b)) > left {
		b = b[:left]
	}
	n, err := l.r.Read(b)
	l.left.Add(-int64(n))
	l.got.Add(int64(n))
	return n, err
}

func (l *headLimit) reset(limit int64) {
	l.left.Store(limit)
	l.got.Store(0)
	l.hit.Store(false)
}

// readHead reads one request head within the time and size limits,
// answering and auditing what it refuses.
func (c *conn) readHead(first bool) (*http.Request, bool) {
	o := c.p.opts
	c.lim.reset(int64(o.MaxHeaderBytes) + readBuf)
	pending := c.br.Buffered() > 0
	timeout := o.IdleTimeout
	if first {
		timeout = o.HeadTimeout
	}
	var answered atomic.Bool
	t := time.AfterFunc(timeout, func() {
		if first || pending || c.lim.got.Load() > 0 {
			answered.Store(true)
			c.answer(http.StatusRequestTimeout, fmt.Sprintf("mcp-sandbox: the request did not arrive within %s", timeout))
		}
		c.rwc.Close()
	})
	req, err := http.ReadRequest(c.br)
	if !t.Stop() {
		if answered.Load() {
			c.audit(Record{Reason: fmt.Sprintf("the request head did not arrive within %s", timeout), Status: http.StatusRequestTimeout})
		}
		return nil, false
	}
	tooLarge, got := c.lim.hit.Load(), c.lim.got.Load()
	c.lim.reset(math.MaxInt64)
	switch {
	case err == nil:
		return req, true
	case tooLarge:
		why := fmt.Sprintf("the request head is larger than %d bytes", o.MaxHeaderBytes)
		c.answer(http.StatusRequestHeaderFieldsTooLarge, "mcp-sandbox: "+why)
		c.audit(Record{Reason: why, Status: http.StatusRequestHeaderFieldsTooLarge})
	case errors.Is(err, io.EOF) && !pending && got == 0:
		if first {
			c.audit(Record{Reason: "the connection closed before a request"})
		}
	default:
		why := "not an HTTP request: " + printable.Clean(err.Error(), 120)
		c.answer(http.StatusBadRequest, "mcp-sandbox: "+why)
		c.audit(Record{Reason: why, Status: http.StatusBadRequest})
	}
	return nil, false
}

// answer writes the proxy's own one-line answer and asks the client to
// close; a client that does not read within WriteTimeout is closed.
func (c *conn) answer(status int, body string) {
	body = printable.Clean(strings.ReplaceAll(body, "\n", " "), 1024) + "\n"
	head := fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: %d\r\nConnection: close\r\n\r\n",
		status, http.StatusText(status), len(body))
	c.write([]byte(head + body))
}

// write writes b, closing the connection if the client does not take it
// within WriteTimeout.
func (c *conn) write(b []byte) error {
	t := time.AfterFunc(c.p.opts.WriteTimeout, func() { c.rwc.Close() })
	defer t.Stop()
	_, err := c.rwc.Write(b)
	return err
}

// target reads the host and port a request names; defPort 0 requires a
// port.
func target(hostport string, defPort int) (string, int, error) {
	host, portStr := hostport, ""
	if strings.HasPrefix(hostport, "[") {
		i := strings.LastIndex(hostport, "]")
		if i < 0 {
			return "", 0, errors.New("an unclosed bracket")
		}
		host, portStr = hostport[:i+1], hostport[i+1:]
		if portStr != "" && !strings.HasPrefix(portStr, ":") {
			return "", 0, errors.New("text after the bracket")
		}
		portStr = strings.TrimPrefix(portStr, ":")
	} else if i := strings.LastIndex(hostport, ":"); i >= 0 {
		if strings.Count(hostport, ":") > 1 {
			return "", 0, errors.New("an IPv6 address must be in brackets")
		}
		host, portStr = hostport[:i], hostport[i+1:]
		if portStr == "" {
			return "", 0, errors.New("an empty port")
		}
	}
	if portStr == "" {
		if defPort == 0 {
			return "", 0, errors.New("CONNECT needs host:port")
		}
		return host, defPort, nil
	}
	port, err := parsePort(portStr)
	return host, port, err
}

// hostRecord starts the record of a request to hostport.
func (c *conn) hostRecord(method, host string, port int) Record {
	return Record{Start: time.Now(), Method: method, Host: printable.Clean(host, 260), Port: port}
}

// refuse answers a refusal and audits it.
func (c *conn) refuse(rec Record, r *refusal) {
	hostport := net.JoinHostPort(rec.Host, strconv.Itoa(rec.Port))
	if rec.Port == 0 {
		hostport = rec.Host
	}
	rec.Status = r.status
	var body string
	if r.policy {
		rec.Reason = r.reason
		c.p.noteRefused(hostport)
		body = fmt.Sprintf("mcp-sandbox refused %s: %s", hostport, r.reason)
		if r.entry != "" {
			body += "; " + fmt.Sprintf(c.p.opts.AllowHint, r.entry)
		}
	} else {
		rec.Allowed = true
		rec.Error = r.reason
		body = fmt.Sprintf("mcp-sandbox could not reach %s: %s", hostport, r.reason)
	}
	c.answer(r.status, body)
	c.audit(rec)
}

// audit sends rec to the audit callback with its duration.
func (c *conn) audit(rec Record) {
	if rec.Start.IsZero() {
		rec.Start = c.start
	}
	rec.Duration = time.Since(rec.Start)
	if c.p.opts.Audit != nil {
		c.p.opts.Audit(rec)
	}
}

// parseTarget reads and canonicalises a request's host, refusing (and
// auditing) one that cannot be used.
func (c *conn) parseTarget(method, hostport string, defPort int) (Host, int, bool) {
	raw, port, err := target(hostport, defPort)
	if err != nil {
		why := fmt.Sprintf("%q is not host:port (%v)", clip(hostport), err)
		c.answer(http.StatusBadRequest, "mcp-sandbox: "+why)
		c.audit(Record{Start: time.Now(), Method: method, Host: printable.Clean(hostport, 260), Reason: why, Status: http.StatusBadRequest})
		return Host{}, 0, false
	}
	h, err := ParseHost(raw)
	if err != nil {
		rec := c.hostRecord(method, raw, port)
		c.refuse(rec, &refusal{status: http.StatusForbidden, reason: printable.Clean(err.Error(), 200), policy: true})
		return Host{}, 0, false
	}
	return h, port, true
}
