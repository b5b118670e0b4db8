package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// exposeRunner is the runners key of a sandbox's previews: closing the
// runners (stop, expiry, reaping, the container's death, Close) closes
// them.
const exposeRunner = "expose"

// maxExposed bounds the ports one sandbox may expose at once (and so
// the previews its state record lists).
const maxExposed = state.MaxPreviews

// Exposure is a port of a sandbox reachable from the host: URL
// (http://127.0.0.1:HostPort/) reaches Port on the sandbox's loopback.
type Exposure struct {
	Port     int    `json:"port"`
	URL      string `json:"url"`
	HostPort int    `json:"host_port"`
}

// exposeSet is a sandbox's previews, by port inside.
type exposeSet struct {
	mu     sync.Mutex
	closed bool
	ports  map[int]*preview
}

// preview is one exposed port: a listener on the host's loopback whose
// requests are carried over the agent, each as a stream (package agentconn).
type preview struct {
	Exposure
	srv *http.Server
	tr  *http.Transport

	// answered is set once the program inside has answered: only then
	// does a refused connection mean it ended (before, it may not listen
	// yet, and the request gets a plain 502).
	answered atomic.Bool

	mu      sync.Mutex
	streams map[*agentconn.Stream]bool // open, so close can end them (upgrades too)
	closed  bool
}

func (x *exposeSet) close() {
	x.mu.Lock()
	x.closed = true
	ps := x.ports
	x.ports = nil
	x.mu.Unlock()
	for _, p := range ps {
		p.close()
	}
}

func (x *exposeSet) list() []Exposure {
	x.mu.Lock()
	defer x.mu.Unlock()
	out := make([]Exposure, 0, len(x.ports))
	for _, p := range x.ports {
		out = append(out, p.Exposure)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Port < out[j].Port })
	return out
}

// exposeSet returns sb's previews (made on first use), or nil while sb is
// being removed.
func (sb *Sandbox) exposeSet(create bool) *exposeSet {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil
	}
	x, ok := sb.runners[exposeRunner].(*exposeSet)
	if !ok && create {
		if sb.runners == nil {
			sb.runners = map[string]residentRunner{}
		}
		x = &exposeSet{ports: map[int]*preview{}}
		sb.runners[exposeRunner] = x
	}
	return x
}

// Exposed lists the exposed ports of sandbox id, by port (none for a
// sandbox this engine does not own). It is apart from Info, which the
// tray and window compare by value.
func (e *Engine) Exposed(id string) []Exposure {
	e.mu.Lock()
	sb := e.boxes[id]
	e.mu.Unlock()
	if sb != nil {
		if x := sb.exposeSet(false); x != nil {
			return x.list()
		}
	}
	return []Exposure{}
}

// ErrNoAgentForExpose is returned (wrapped) when a sandbox's command agent
// cannot run: previews ride its connection, and never fall back to giving
// the sandbox a network.
var ErrNoAgentForExpose = errors.New("previews need the sandbox's command agent, which does not run in this sandbox; the sandbox is given no network instead")

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

// Expose makes Port on sandbox id's loopback reachable at a URL on the
// host's loopback (the same URL again if it already is).
func (e *Engine) Expose(ctx context.Context, id string, req ExposeRequest) (Exposure, error) {
	port := req.Port
	if port < 1 || port > 65535 {
		return Exposure{}, fmt.Errorf("%w: port must be between 1 and 65535 (got %d)", ErrInvalid, port)
	}
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return Exposure{}, err
	}
	x := sb.exposeSet(true)
	if x == nil {
		return Exposure{}, fmt.Errorf("%w: sandbox %s is stopping", ErrNotFound, id)
	}
	x.mu.Lock()
	p := x.ports[port]
	n := len(x.ports)
	x.mu.Unlock()
	if p != nil {
		return p.Exposure, nil
	}
	if n >= maxExposed {
		return Exposure{}, fmt.Errorf("sandbox %s already exposes %d ports, the most it may; close one with close: true", id, maxExposed)
	}
	c := e.agentFor(ctx, sb)
	if c == nil {
		_, why := sb.execPath()
		if why == "" {
			why = "the engine cannot attach to it"
		}
		return Exposure{}, fmt.Errorf("%w (%s)", ErrNoAgentForExpose, why)
	}
	if !c.Streams() {
		return Exposure{}, fmt.Errorf("%w: %w", ErrNoAgentForExpose, agentconn.ErrNoStreams)
	}
	return e.startPreview(sb, x, port)
}

// startPreview listens on the host's loopback for port and adds it to x.
func (e *Engine) startPreview(sb *Sandbox, x *exposeSet, port int) (Exposure, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return Exposure{}, fmt.Errorf("listen on the host's loopback: %w", err)
	}
	hp := ln.Addr().(*net.TCPAddr).Port
	p := &preview{
		Exposure: Exposure{Port: port, HostPort: hp, URL: "http://127.0.0.1:" + strconv.Itoa(hp) + "/"},
		streams:  map[*agentconn.Stream]bool{},
	}
	p.tr = e.previewTransport(sb, p)
	p.srv = &http.Server{
		Handler:           e.previewHandler(sb, p),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
	}
	x.mu.Lock()
	if x.closed || x.ports[port] != nil {
		other := x.ports[port]
		x.mu.Unlock()
		ln.Close()
		if other != nil { // a concurrent call won
			return other.Exposure, nil
		}
		return Exposure{}, fmt.Errorf("%w: sandbox %s is stopping", ErrNotFound, sb.ID)
	}
	x.ports[port] = p
	x.mu.Unlock()
	go func() { _ = p.srv.Serve(ln) }() // ends when p.srv closes
	e.log.Info("sandbox port exposed", "id", sb.ID, "port", port, "url", p.URL)
	e.record(sb, true) // the window lists it
	return p.Exposure, nil
}

// Unexpose closes the preview of Port in sandbox id; it reports whether
// there was one.
func (e *Engine) Unexpose(ctx context.Context, id string, req ExposeRequest) (UnexposeResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return UnexposeResult{}, err
	}
	x := sb.exposeSet(false)
	if x == nil {
		return UnexposeResult{}, nil
	}
	x.mu.Lock()
	p := x.ports[req.Port]
	delete(x.ports, req.Port)
	x.mu.Unlock()
	if p == nil {
		return UnexposeResult{}, nil
	}
	p.close()
	e.log.Info("sandbox port no longer exposed", "id", sb.ID, "port", req.Port)
	e.record(sb, true)
	return UnexposeResult{Closed: true}, nil
}

// PreviewClosedHeader is set on the 502 a preview answers when nothing
// listens on its port any more (and it closes): the window asks before
// opening the browser.
const PreviewClosedHeader = "X-Mcp-Sandbox-Preview-Closed"

// dropPreview closes p, whose program no longer listens, and takes it
// out of sb's record: the window then shows no preview that cannot open.
func (e *Engine) dropPreview(sb *Sandbox, p *preview) {
	x := sb.exposeSet(false)
	if x == nil {
		return
	}
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
	e.log.Info("sandbox preview closed: nothing listens on its port", "id", sb.ID, "port", p.Port)
	e.record(sb, true)
}

// close stops listening and ends every connection the preview carries.
func (p *preview) close() {
	_ = p.srv.Close()
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

// previewTransport carries requests to port inside sb, one stream per
// connection, through whichever agent sb runs when it is made.
func (e *Engine) previewTransport(sb *Sandbox, p *preview) *http.Transport {
	return &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			c := e.agentFor(ctx, sb)
			if c == nil {
				return nil, ErrNoAgentForExpose
			}
			s, err := c.Dial(ctx, p.Port, proxyBusyRoom)
			if err != nil {
				return nil, err
			}
			p.mu.Lock()
			if p.closed {
				p.mu.Unlock()
				s.Close()
				return nil, net.ErrClosed
			}
			p.streams[s] = true
			p.mu.Unlock()
			return &trackedStream{Stream: s, p: p}, nil
		},
		// No MaxConnsPerHost: its queue held a fresh request behind
		// readers that stopped reading (issue 31); Dial refuses at
		// once instead, and a stream standing still is cut
		// (agentconn.StallLimit).
		MaxIdleConnsPerHost:    8,
		IdleConnTimeout:        30 * time.Second,
		DisableCompression:     true,
		MaxResponseHeaderBytes: 64 << 10,
	}
}

// trackedStream leaves its preview's set when closed.
type trackedStream struct {
	*agentconn.Stream
	p *preview
}

func (t *trackedStream) Close() error {
	t.p.mu.Lock()
	delete(t.p.streams, t.Stream)
	t.p.mu.Unlock()
	return t.Stream.Close()
}

// previewHandler answers only requests addressed to the preview's own
// loopback address (a page of another name that resolves to 127.0.0.1, DNS
// rebinding, is refused), and carries each to the port inside, upgrades
// (WebSocket) included.
func (e *Engine) previewHandler(sb *Sandbox, p *preview) http.Handler {
	hp := strconv.Itoa(p.HostPort)
	allowed := map[string]bool{"127.0.0.1:" + hp: true, "localhost:" + hp: true}
	inside := &url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(p.Port)}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(inside)
			pr.Out.Host = pr.In.Host // the program sees the address the browser used
		},
		Transport: p.tr,
		ModifyResponse: func(*http.Response) error {
			p.answered.Store(true)
			return nil
		},
		FlushInterval: -1,
		ErrorLog:      log.New(io.Discard, "", 0),
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			if errors.Is(err, agentconn.ErrNothingListens) && p.answered.Load() {
				w.Header().Set(PreviewClosedHeader, "nothing listens")
				http.Error(w, fmt.Sprintf("mcp-sandbox: nothing listens on port %d in sandbox %s any more, so its preview is closed; expose the port again once a program listens on it", p.Port, sb.ID), http.StatusBadGateway)
				http.NewResponseController(w).Flush()
				go e.dropPreview(sb, p)
				return
			}
			http.Error(w, fmt.Sprintf("mcp-sandbox: nothing answered on port %d in sandbox %s: %v", p.Port, sb.ID, err), http.StatusBadGateway)
		},
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[r.Host] {
			w.Header().Set("Connection", "close")
			http.Error(w, "mcp-sandbox: this preview answers only requests for "+p.URL+" (Host "+strconv.Quote(clipString(r.Host, 100))+" refused)", http.StatusForbidden)
			return
		}
		e.touch(sb)
		sw := stallWriter{ResponseWriter: w, rc: http.NewResponseController(w)}
		sw.extend()
		rp.ServeHTTP(sw, r)
		sw.extend() // for the response's end, written after the handler returns
	})
}

// stallWriter gives each write to the host's reader agentconn.StallLimit, as
// a stream has: a reader that takes nothing for that long is cut, which
// ends the request and frees its stream into the sandbox. (An upgraded
// connection is hijacked, and its deadlines cleared, by then.)
type stallWriter struct {
	http.ResponseWriter
	rc *http.ResponseController
}

func (w stallWriter) extend() { _ = w.rc.SetWriteDeadline(time.Now().Add(agentconn.StallLimit())) }

func (w stallWriter) WriteHeader(code int) {
	w.extend()
	w.ResponseWriter.WriteHeader(code)
}

func (w stallWriter) Write(p []byte) (int, error) {
	w.extend()
	return w.ResponseWriter.Write(p)
}

// Unwrap lets the proxy flush and hijack through the ResponseController.
func (w stallWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// touch moves sb's expiry on: a preview in use is use.
func (e *Engine) touch(sb *Sandbox) {
	sb.mu.Lock()
	sb.lastUsed = time.Now()
	sb.mu.Unlock()
	e.record(sb, true)
}
