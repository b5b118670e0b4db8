package preview

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Max bounds the ports one sandbox may expose at once (and so the
// previews its state record lists).
const Max = state.MaxPreviews

// Exposure is a port of a sandbox reachable from the host: URL
// (http://127.0.0.1:HostPort/) reaches Port on the sandbox's loopback.
type Exposure struct {
	Port     int    `json:"port"`
	URL      string `json:"url"`
	HostPort int    `json:"host_port"`
}

// ErrNoAgent is returned (wrapped) when a sandbox's command agent cannot
// run: previews ride its connection, and never fall back to giving the
// sandbox a network.
var ErrNoAgent = errors.New("previews need the sandbox's command agent, which does not run in this sandbox; the sandbox is given no network instead")

// ErrClosed is returned by Expose once the Set is closed (its sandbox is
// stopping).
var ErrClosed = errors.New("the sandbox's previews are closed")

// ClosedHeader is set on the 502 a preview answers when nothing listens
// on its port any more (and it closes): the window asks before opening
// the browser.
const ClosedHeader = "X-Mcp-Sandbox-Preview-Closed"

// ExposeRequest says which port Expose and Unexpose act on.
type ExposeRequest struct {
	// Port is a port a program in the sandbox listens on, on its loopback.
	Port int
}

// UnexposeResult is what Unexpose reports.
type UnexposeResult struct {
	// Closed says there was a preview of the port, and it is closed now.
	Closed bool
}

// Config is what a sandbox's previews need from the engine.
type Config struct {
	// ID is the sandbox's, for messages and the log.
	ID  string
	Log *slog.Logger
	// Ready says why a new preview cannot be carried now (nil: it can).
	Ready func(ctx context.Context) error
	// Dial opens a connection to port on the sandbox's loopback.
	Dial func(ctx context.Context, port int) (net.Conn, error)
	// Used is called for each request: a preview in use is use.
	Used func()
	// Changed is called after the set of previews changed (the record
	// lists them).
	Changed func()
}

// Set is a sandbox's previews, by port inside.
type Set struct {
	cfg    Config
	mu     sync.Mutex
	closed bool
	ports  map[int]*preview
}

// NewSet returns an empty Set for one sandbox.
func NewSet(cfg Config) *Set {
	return &Set{cfg: cfg, ports: map[int]*preview{}}
}

// preview is one exposed port: a listener on the host's loopback whose
// connections are carried by cfg.Dial, each its own.
type preview struct {
	Exposure
	srv *http.Server
	tr  *http.Transport
	// ln is closed by close itself: srv.Close closes only the listeners
	// Serve has begun on, and its goroutine may not have run yet.
	ln net.Listener

	// answered is set once the program inside has answered: only then
	// does a refused connection mean it ended (before, it may not listen
	// yet, and the request gets a plain 502).
	answered atomic.Bool

	mu      sync.Mutex
	streams map[net.Conn]bool // open, so close can end them (upgrades too)
	closed  bool
}

// Close closes every preview; Expose fails with ErrClosed from now on.
func (x *Set) Close() {
	x.mu.Lock()
	x.closed = true
	ps := x.ports
	x.ports = nil
	x.mu.Unlock()
	for _, p := range ps {
		p.close()
	}
}

// List returns the previews, by port.
func (x *Set) List() []Exposure {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]Exposure, 0, len(x.ports))
	for _, p := range x.ports {
		out = append(out, p.Exposure)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out
}

// Records returns the previews as the sandbox's state record lists them.
func (x *Set) Records() []state.Preview {
	var out []state.Preview
	for _, p := range x.List() { // at most Max
		out = append(out, state.Preview{Port: p.Port, HostPort: p.HostPort})
	}
	return out
}

// FromRecords turns a record's previews into Exposures: at most Max, each
// with ports in range, its URL made here (not read as text).
func FromRecords(ps []state.Preview) (out [Max]Exposure) {
	n := 0
	for _, p := range ps {
		if u := p.URL(); u != "" && n < len(out) {
			out[n] = Exposure{Port: p.Port, URL: u, HostPort: p.HostPort}
			n++
		}
	}
	return out
}

// Expose makes port on the sandbox's loopback reachable at a URL on the
// host's loopback (the same URL again if it already is).
func (x *Set) Expose(ctx context.Context, req ExposeRequest) (Exposure, error) {
	port := req.Port
	x.mu.Lock()
	p := x.ports[port]
	n := len(x.ports)
	closed := x.closed
	x.mu.Unlock()
	switch {
	case closed:
		return Exposure{}, ErrClosed
	case p != nil:
		return p.Exposure, nil
	case n >= Max:
		return Exposure{}, fmt.Errorf("sandbox %s already exposes %d ports, the most it may; close one with close: true", x.cfg.ID, Max)
	}
	if err := x.cfg.Ready(ctx); err != nil {
		return Exposure{}, err
	}
	return x.start(port)
}

// start listens on the host's loopback for port and adds it to x.
func (x *Set) start(port int) (Exposure, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Exposure{}, fmt.Errorf("listen on the host's loopback: %w", err)
	}
	hp := ln.Addr().(*net.TCPAddr).Port
	p := &preview{
		Exposure: Exposure{Port: port, HostPort: hp, URL: "http://127.0.0.1:" + strconv.Itoa(hp) + "/"},
		ln:       ln,
		streams:  map[net.Conn]bool{},
	}
	p.tr = x.transport(p)
	p.srv = newServer(x.handler(p))
	x.mu.Lock()
	if x.closed || x.ports[port] != nil {
		other := x.ports[port]
		x.mu.Unlock()
		ln.Close()
		if other != nil { // a concurrent call won
			return other.Exposure, nil
		}
		return Exposure{}, ErrClosed
	}
	x.ports[port] = p
	x.mu.Unlock()
	go func() { _ = p.srv.Serve(ln) }() // ends when p.srv closes
	x.cfg.Log.Info("sandbox port exposed", "id", x.cfg.ID, "port", port, "url", p.URL)
	x.cfg.Changed() // the window lists it
	return p.Exposure, nil
}

// Unexpose closes the preview of Port; it reports whether there was one.
func (x *Set) Unexpose(req ExposeRequest) UnexposeResult {
	port := req.Port
	x.mu.Lock()
	p := x.ports[port]
	delete(x.ports, port)
	x.mu.Unlock()
	if p == nil {
		return UnexposeResult{}
	}
	p.close()
	x.cfg.Log.Info("sandbox port no longer exposed", "id", x.cfg.ID, "port", port)
	x.cfg.Changed()
	return UnexposeResult{Closed: true}
}

// drop closes p, whose program no longer listens, and takes it out of the
// record: the window then shows no preview that cannot open.
func (x *Set) drop(p *preview) {
	x.mu.Lock()
	ours := x.ports[p.Port] == p
	if ours {
		delete(x.ports, p.Port)
	}
	x.mu.Unlock()
	if !ours {
		return
	}
	p.close()
	x.cfg.Log.Info("sandbox preview closed: nothing listens on its port", "id", x.cfg.ID, "port", p.Port)
	x.cfg.Changed()
}

// close stops listening and ends every connection the preview carries.
func (p *preview) close() {
	_ = p.srv.Close()
	_ = p.ln.Close()
	p.tr.CloseIdleConnections()
	p.mu.Lock()
	p.closed = true
	streams := p.streams
	p.streams = nil
	p.mu.Unlock()
	for s := range streams {
		s.Close()
	}
}

// track adds s to p's open connections, or closes it when p is closed.
func (p *preview) track(s net.Conn) (net.Conn, error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		s.Close()
		return nil, net.ErrClosed
	}
	p.streams[s] = true
	p.mu.Unlock()
	return &trackedConn{Conn: s, p: p}, nil
}

// trackedConn leaves its preview's set when closed.
type trackedConn struct {
	net.Conn
	p *preview
}

func (t *trackedConn) Close() error {
	t.p.mu.Lock()
	delete(t.p.streams, t.Conn)
	t.p.mu.Unlock()
	return t.Conn.Close()
}
