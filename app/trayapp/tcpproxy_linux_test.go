package trayapp

import (
	"io"
	"net"
	"sync"
	"testing"
	"time"
)

// tcpProxy forwards a loopback port to upstream until Cut, which closes
// the port and every connection through it (the far side stops
// answering); Restore listens on the same port again.
type tcpProxy struct {
	upstream, addr string

	mu    sync.Mutex
	l     net.Listener
	conns []net.Conn
}

func startTCPProxy(t *testing.T, upstream string) *tcpProxy {
	t.Helper()
	p := &tcpProxy{upstream: upstream}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p.addr = l.Addr().String()
	p.serve(l)
	t.Cleanup(p.Cut)
	return p
}

func (p *tcpProxy) serve(l net.Listener) {
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.DialTimeout("tcp", p.upstream, 5*time.Second)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
}

// Cut closes the port and every connection through it.
func (p *tcpProxy) Cut() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.l != nil {
		p.l.Close()
		p.l = nil
	}
	for _, c := range p.conns {
		c.Close()
	}
	p.conns = nil
}

// Restore listens on the same port again.
func (p *tcpProxy) Restore(t *testing.T) {
	t.Helper()
	l, err := net.Listen("tcp", p.addr)
	if err != nil {
		t.Fatal(err)
	}
	p.serve(l)
}
