package netproxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/textproto"
	"strings"
)

// hopHeaders are the headers of one hop that a proxy does not pass on
// (RFC 9110 §7.6.1), besides every Proxy-* header and those Connection
// names.
// maxResponseHead bounds a response's head from the host (what is read
// while parsing it is held in memory).
const maxResponseHead = 1 << 20

var hopHeaders = []string{"Connection", "Keep-Alive", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// stripHop removes the hop-by-hop and Proxy-* headers.
func stripHop(h http.Header) {
	for _, v := range h.Values("Connection") {
		for _, name := range strings.Split(v, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopHeaders {
		h.Del(name)
	}
	for name := range h {
		if strings.HasPrefix(textproto.CanonicalMIMEHeaderKey(name), "Proxy-") {
			delete(h, name)
		}
	}
}

// forward serves one absolute-URI plain HTTP request over a connection
// of its own to the checked address, and reports whether the client's
// connection may carry another request.
func (c *conn) forward(ctx context.Context, req *http.Request) bool {
	if !req.URL.IsAbs() || req.URL.Scheme != "http" || req.URL.Host == "" {
		why := "this is a proxy: send http://host/… requests, or CONNECT host:port for https"
		c.answer(http.StatusBadRequest, "mcp-sandbox: "+why)
		c.audit(Record{Start: c.start, Method: req.Method, Reason: why, Status: http.StatusBadRequest})
		return false
	}
	h, port, ok := c.parseTarget(req.Method, req.URL.Host, 80)
	if !ok {
		return false
	}
	rec := c.hostRecord(req.Method, h.String(), port)
	up, addr, r := c.p.connect(ctx, h, port)
	if r != nil {
		c.refuse(rec, r)
		return false
	}
	defer up.Close()
	defer context.AfterFunc(ctx, func() { up.Close() })()
	c.p.allowed.Add(1)
	rec.Allowed, rec.Addr = true, addr.String()

	clientClose := req.Close
	stripHop(req.Header)
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		req.Header.Del("Expect")
		if c.write([]byte("HTTP/1.1 100 Continue\r\n\r\n")) != nil {
			return false
		}
	}
	req.RequestURI, req.Host, req.Close = "", req.URL.Host, true
	req.URL.User = nil
	out := &counter{w: up, total: &c.p.bytesOut}
	bw := bufio.NewWriterSize(out, 32<<10)
	if err := req.Write(bw); err != nil || bw.Flush() != nil {
		rec.BytesOut = out.n
		c.refuse(rec, &refusal{status: http.StatusBadGateway, reason: fmt.Sprintf("sending the request failed: %v", err)})
		return false
	}
	keep, status, in := c.relayResponse(up, req, clientClose)
	rec.Status, rec.BytesIn, rec.BytesOut = status, in, out.n
	if status == 0 {
		c.refuse(rec, &refusal{status: http.StatusBadGateway, reason: "the host sent no valid HTTP response"})
		return false
	}
	c.audit(rec)
	return keep
}

// relayResponse copies the response (after any 1xx) to the client. It
// returns whether the client connection stays open, the final status (0
// when none could be read) and the bytes written.
func (c *conn) relayResponse(up io.Reader, req *http.Request, clientClose bool) (bool, int, int64) {
	lim := &headLimit{r: up}
	br := bufio.NewReaderSize(lim, 32<<10)
	in := &counter{w: c.rwc, total: &c.p.bytesIn}
	bw := bufio.NewWriterSize(in, 32<<10)
	for {
		lim.reset(maxResponseHead)
		resp, err := http.ReadResponse(br, req)
		lim.reset(math.MaxInt64)
		if err != nil {
			return false, 0, in.n
		}
		stripHop(resp.Header)
		informational := resp.StatusCode >= 100 && resp.StatusCode < 200 && resp.StatusCode != http.StatusSwitchingProtocols
		unbounded := resp.ContentLength < 0 && len(resp.TransferEncoding) == 0 && req.Method != http.MethodHead
		keep := !clientClose && !resp.Close && !unbounded && resp.StatusCode != http.StatusSwitchingProtocols
		if !informational {
			resp.Close = !keep
		}
		err = resp.Write(bw)
		resp.Body.Close()
		if err == nil {
			err = bw.Flush()
		}
		if err != nil {
			return false, resp.StatusCode, in.n
		}
		if !informational {
			return keep, resp.StatusCode, in.n
		}
	}
}
