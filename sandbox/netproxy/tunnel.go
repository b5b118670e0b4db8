package netproxy

import (
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
)

// tunnel serves a CONNECT: the bytes pass through untouched both ways.
func (c *conn) tunnel(ctx context.Context, req *http.Request) {
	h, port, ok := c.parseTarget(http.MethodConnect, req.RequestURI, 0)
	if !ok {
		return
	}
	rec := c.hostRecord(http.MethodConnect, h.String(), port)
	up, addr, r := c.p.connect(ctx, h, port)
	if r != nil {
		c.refuse(rec, r)
		return
	}
	defer up.Close()
	defer context.AfterFunc(ctx, func() { up.Close() })()
	c.p.allowed.Add(1)
	rec.Allowed, rec.Addr, rec.Status = true, addr.String(), http.StatusOK
	if err := c.write([]byte("HTTP/1.1 200 Connection established\r\n\r\n")); err != nil {
		c.audit(rec)
		return
	}
	out := &counter{w: up, total: &c.p.bytesOut}
	if n := c.br.Buffered(); n > 0 {
		// Bytes the client sent right after its CONNECT (a TLS hello).
		b, _ := c.br.Peek(n)
		if _, err := out.Write(b); err != nil {
			rec.BytesOut = out.n
			c.audit(rec)
			return
		}
	}
	in := &counter{w: c.rwc, total: &c.p.bytesIn}
	splice(c.rwc, up, in, out)
	rec.BytesIn, rec.BytesOut = in.n, out.n
	c.audit(rec)
}

// counter counts what passes to w, for the record and the proxy's totals.
type counter struct {
	w     io.Writer
	n     int64
	total *atomic.Int64
}

func (c *counter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	c.total.Add(int64(n))
	return n, err
}

var copyBufs = sync.Pool{New: func() any { b := make([]byte, 32<<10); return &b }}

// copyBuf copies with a pooled buffer.
func copyBuf(dst io.Writer, src io.Reader) {
	b := copyBufs.Get().(*[]byte)
	defer copyBufs.Put(b)
	_, _ = io.CopyBuffer(dst, onlyReader{src}, *b)
}

// onlyReader hides WriterTo so copyBuf's buffer (and counter) is used.
type onlyReader struct{ io.Reader }

// closeWriter is a connection that can end one direction (TCP).
type closeWriter interface{ CloseWrite() error }

// splice copies both ways until both end. When one way ends, the other
// side's writing half is closed if it can be, else the whole of it.
func splice(client io.ReadWriteCloser, up net.Conn, in, out *counter) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		copyBuf(out, client)
		halfClose(up)
	}()
	copyBuf(in, up)
	halfClose(client)
	<-done
}

func halfClose(c io.Closer) {
	if cw, ok := c.(closeWriter); ok {
		if cw.CloseWrite() == nil {
			return
		}
	}
	c.Close()
}
