package apptest

import (
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/client"
)

// EngineProxy forwards a unix socket to the local engine's socket, so a
// test can take Docker away from a program pointed at the proxy
// (DOCKER_HOST=unix://PATH) and give it back, while the shared dockerd
// runs on for everyone else.
type EngineProxy struct {
	// Path is the proxy's socket; Host is "unix://" + Path.
	Path, Host string

	target string
	wg     sync.WaitGroup

	mu    sync.Mutex
	l     net.Listener
	conns []net.Conn
}

// StartEngineProxy listens at path and forwards every connection to
// engine's unix socket, until Cut or the test's end. It skips the test
// when the engine is not on a unix socket.
func StartEngineProxy(t testing.TB, engine *client.Client, path string) *EngineProxy {
	t.Helper()
	target, ok := strings.CutPrefix(engine.DaemonHost(), "unix://")
	if !ok {
		t.Skipf("the engine is at %s, not a unix socket a proxy can forward to", engine.DaemonHost())
	}
	p := &EngineProxy{Path: path, Host: "unix://" + path, target: target}
	if err := p.Resume(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Cut(); p.wg.Wait() })
	return p
}

// Cut closes the socket and every connection made through it: for the
// program using the proxy, Docker is gone.
func (p *EngineProxy) Cut() {
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

// Resume listens again after Cut: Docker is back.
func (p *EngineProxy) Resume() error {
	l, err := net.Listen("unix", p.Path)
	if err != nil {
		return err
	}
	p.mu.Lock()
	p.l = l
	p.mu.Unlock()
	p.wg.Add(1)
	go p.accept(l)
	return nil
}

func (p *EngineProxy) accept(l net.Listener) {
	defer p.wg.Done()
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		u, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		if p.l != l { // cut meanwhile
			p.mu.Unlock()
			c.Close()
			u.Close()
			return
		}
		p.conns = append(p.conns, c, u)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			io.Copy(u, c)
			u.(*net.UnixConn).CloseWrite()
		}()
		go func() {
			defer p.wg.Done()
			io.Copy(c, u)
			c.Close()
			u.Close()
		}()
	}
}
