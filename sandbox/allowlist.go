package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// ProxyPort is the port of an allowlist sandbox's proxy on its own
// loopback (127.0.0.1:3128, the usual port of an HTTP proxy): the command
// agent listens there and carries each connection to the server, which
// serves it with the sandbox's netproxy.Proxy.
const ProxyPort = 3128

// proxyStartTimeout bounds the agent's answer to the proxy's listen.
const proxyStartTimeout = 10 * time.Second

// proxyRunner is the runners key of a sandbox's proxy: closing the
// runners (stop, expiry, reaping, the container's death, Close) ends its
// connections.
const proxyRunner = "netproxy"

// proxyURL is what the proxy variables name.
var proxyURL = "http://127.0.0.1:" + strconv.Itoa(ProxyPort)

// proxyEnv is set in an allowlist sandbox's container, so every process
// in it (run_code, sandbox_exec, the resident runners, a person's docker
// exec) finds the proxy.
var proxyEnv = []string{
	"HTTP_PROXY=" + proxyURL, "HTTPS_PROXY=" + proxyURL,
	"http_proxy=" + proxyURL, "https_proxy=" + proxyURL,
	"ALL_PROXY=" + proxyURL, "all_proxy=" + proxyURL,
	"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
}

// AskRequest is what the person is asked about: a sandbox of Language,
// made by Client, wants Host:Port, which no entry allows.
type AskRequest struct {
	SandboxID, Language, Client, Host string
	Port                              int
}

// ErrNoAgentForAllowlist is returned (wrapped in ErrAllowlistUnavailable)
// when an allowlist sandbox's command agent cannot run: its proxy rides
// the agent's connection, and the sandbox is never given a network
// instead.
var ErrNoAgentForAllowlist = errors.New("allowlist networking needs the sandbox's command agent, which does not run in this sandbox; the sandbox is given no network instead")

// sandboxProxy is an allowlist sandbox's proxy: one netproxy.Proxy for
// the sandbox's life, served on whichever agent runs.
type sandboxProxy struct {
	p      *netproxy.Proxy
	own    bool // the sandbox named its own allow_domains
	ctx    context.Context
	cancel context.CancelFunc
	audit  auditBudget
	// log holds the newest connections, for the logs resource.
	log netLog
	// closed writes the audit line of what the budget kept out.
	closed func()

	mu       sync.Mutex
	conn     *agentconn.Conn
	listener int
}

func (sp *sandboxProxy) listening() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.conn != nil && !sp.conn.Gone() && sp.ctx.Err() == nil
}

func (sp *sandboxProxy) close() {
	sp.cancel()
	if sp.closed != nil {
		sp.closed()
	}
	sp.mu.Lock()
	c, id := sp.conn, sp.listener
	sp.conn = nil
	sp.mu.Unlock()
	if c != nil {
		c.Unlisten(id)
	}
}

// NetworkInfo is a sandbox's network as sandbox_list shows it.
type NetworkInfo struct {
	Mode string `json:"mode"`
	// Allowed are the entries an allowlist sandbox may reach without
	// asking; Stats its proxy's counters.
	Allowed []string        `json:"allowed,omitempty"`
	Stats   *netproxy.Stats `json:"stats,omitempty"`
}

// Network describes sandbox id's network (mode only for a sandbox this
// engine does not own, or before its proxy first started).
func (e *Engine) Network(id string) NetworkInfo {
	e.mu.Lock()
	sb := e.boxes[id]
	e.mu.Unlock()
	if sb == nil {
		return NetworkInfo{}
	}
	return e.networkOf(sb)
}

// networkOf is sb's network: the one source of sandbox_list's network
// object and of the summary in sb's state record (for the window).
func (e *Engine) networkOf(sb *Sandbox) NetworkInfo {
	n := NetworkInfo{Mode: sb.Network}
	if sb.Network != NetworkAllowlist {
		return n
	}
	sp := sb.proxy(false, nil)
	if sp == nil {
		n.Allowed = entryStrings(e.proxyEntries(sb))
		return n
	}
	n.Allowed = entryStrings(sp.p.Entries())
	st := sp.p.Stats()
	n.Stats = &st
	return n
}

// traffic is n as a state record holds it (bounded there), or nil when
// n has no proxy counters yet.
func (n NetworkInfo) traffic() *state.NetworkSummary {
	if n.Stats == nil {
		return nil
	}
	t := &state.NetworkSummary{
		Allowed: n.Allowed, AllowedTotal: len(n.Allowed),
		AllowedConns: n.Stats.Allowed, RefusedConns: n.Stats.Refused,
		BytesIn: n.Stats.BytesIn, BytesOut: n.Stats.BytesOut, Open: n.Stats.Open,
	}
	for _, h := range n.Stats.RefusedHosts[:min(len(n.Stats.RefusedHosts), state.MaxRecordRefused)] {
		t.Refused = append(t.Refused, state.HostHits{Host: h.Host, Count: h.Count})
	}
	return t.Bounded()
}

func entryStrings(es []netproxy.Entry) []string {
	out := make([]string, len(es))
	for i, x := range es {
		out[i] = x.String()
	}
	return out
}

// proxyEntries are sb's entries: its own allow_domains, or, when it named
// none, the config's whole network.allow_domains (read again for each
// connection, so a person's change applies at once).
func (e *Engine) proxyEntries(sb *Sandbox) []netproxy.Entry {
	list := sb.allowDomains
	if len(list) == 0 {
		list = e.cfg.Current().Network.AllowDomains
	}
	es, err := netproxy.ParseEntries(list)
	if err != nil { // validated before; never reached
		e.log.Warn("allow_domains", "id", sb.ID, "err", err)
		return nil
	}
	return es
}

// proxy returns sb's proxy (made on first use when make is set), or nil
// while sb is being removed.
func (sb *Sandbox) proxy(create bool, newProxy func() *sandboxProxy) *sandboxProxy {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil
	}
	sp, ok := sb.runners[proxyRunner].(*sandboxProxy)
	if !ok && create {
		if sb.runners == nil {
			sb.runners = map[string]residentRunner{}
		}
		sp = newProxy()
		sb.runners[proxyRunner] = sp
	}
	return sp
}

// newProxy makes sb's proxy: its entries, network.max_connections, the
// person-asking seam and the audit log.
func (e *Engine) newProxy(sb *Sandbox) *sandboxProxy {
	cfg := e.cfg.Current()
	ctx, cancel := context.WithCancel(context.Background())
	sp := &sandboxProxy{own: len(sb.allowDomains) > 0, ctx: ctx, cancel: cancel}
	o := netproxy.Options{
		Entries:  e.proxyEntries(sb),
		MaxConns: proxyMaxConns(cfg.Network.MaxConnections),
		Audit: func(r netproxy.Record) {
			sp.log.add(r)
			e.auditNetwork(sb, &sp.audit, r)
			e.record(sb, true) // a connection may carry several requests
		},
	}
	sp.closed = func() {
		if d := sp.audit.flush(); d > 0 {
			e.auditNetworkDropped(sb, d)
		}
	}
	if e.ask != nil {
		o.Ask = func(ctx context.Context, host string, port int) (netproxy.Decision, error) {
			if !e.cfg.Current().Network.Ask {
				return netproxy.Deny, errors.New("network.ask is false, so no person is asked")
			}
			return e.ask(ctx, AskRequest{SandboxID: sb.ID, Language: sb.Language, Client: sb.client(), Host: host, Port: port})
		}
	}
	sp.p = netproxy.New(o)
	return sp
}

// proxyMaxConns is network.max_connections as a proxy can hold it: within
// the agent's streams, less the room for telling the ones over it 503.
func proxyMaxConns(configured int) int {
	return min(configured, agentconn.MaxStreams-proxyBusyRoom)
}

func (sb *Sandbox) client() string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.Client
}

// startProxy has agent c listen on ProxyPort inside sb and serve each
// connection with sb's proxy. It is called after every start of sb's
// agent.
func (e *Engine) startProxy(ctx context.Context, sb *Sandbox, c *agentconn.Conn) error {
	sp := sb.proxy(true, func() *sandboxProxy { return e.newProxy(sb) })
	if sp == nil {
		return fmt.Errorf("%w: sandbox %s is stopping", ErrNotFound, sb.ID)
	}
	id, _, err := c.Listen(ctx, ProxyPort, func(conn net.Conn) { e.serveProxy(sb, sp, lingerConn{conn}) })
	if err != nil {
		return fmt.Errorf("the proxy inside the sandbox: %w", err)
	}
	sp.mu.Lock()
	old, oldID := sp.conn, sp.listener
	sp.conn, sp.listener = c, id
	sp.mu.Unlock()
	if sp.ctx.Err() != nil { // closed meanwhile
		c.Unlisten(id)
	}
	if old != nil && old != c {
		old.Unlisten(oldID)
	}
	return nil
}

// serveProxy serves one connection from inside sb with its proxy. The
// record's counters are written when it opens and when it ends (and
// after each request, see newProxy); the recorder coalesces them to
// about one write a second, however many connections come.
func (e *Engine) serveProxy(sb *Sandbox, sp *sandboxProxy, conn net.Conn) {
	if !sp.own {
		sp.p.SetEntries(e.proxyEntries(sb))
	}
	e.record(sb, true)
	sp.p.Serve(sp.ctx, conn)
	e.record(sb, true) // no longer open
}

// lingerTimeout bounds how long a closed proxy connection waits for the
// program inside to close its side (lingerConn).
const lingerTimeout = 2 * time.Second

// lingerConn closes a stream as a TCP socket with nothing left to read
// is closed: its end is sent (eof) after everything written, and the
// program's end is awaited briefly, so the answer is delivered rather than
// cut by a reset (a stream closed before the program finished sending is
// reset, discarding what the agent had not yet written).
type lingerConn struct{ net.Conn }

func (l lingerConn) CloseWrite() error {
	if cw, ok := l.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (l lingerConn) Close() error {
	if l.CloseWrite() == nil {
		_ = l.SetReadDeadline(time.Now().Add(lingerTimeout))
		_, _ = io.Copy(io.Discard, io.LimitReader(l.Conn, 64<<10))
	}
	return l.Conn.Close()
}

// requireProxy starts sb's agent and proxy, or says why allowlist cannot
// work in sb.
func (e *Engine) requireProxy(ctx context.Context, sb *Sandbox) error {
	if e.agentFor(ctx, sb) == nil {
		_, why := sb.execPath()
		if why == "" {
			why = "the engine cannot attach to it"
		}
		return fmt.Errorf("%w: %w (%s)", ErrAllowlistUnavailable, ErrNoAgentForAllowlist, why)
	}
	if sp := sb.proxy(false, nil); sp == nil || !sp.listening() {
		return fmt.Errorf("%w: the proxy did not start inside the sandbox (the server's log says why); the sandbox is given no network instead", ErrAllowlistUnavailable)
	}
	return nil
}

// auditNetwork writes one proxied connection to the audit log, within
// the sandbox's budget of lines.
func (e *Engine) auditNetwork(sb *Sandbox, budget *auditBudget, r netproxy.Record) {
	if e.st == nil {
		return
	}
	ok, dropped := budget.take(time.Now())
	if !ok {
		return
	}
	what := "allowed"
	if !r.Allowed {
		what = "refused: " + r.Reason
	} else if r.Error != "" {
		what = "allowed, failed: " + r.Error
	}
	target := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	n := &state.NetworkAudit{Host: r.Host, Port: r.Port, Method: r.Method, Allowed: r.Allowed, Reason: r.Reason,
		Error: r.Error, Status: r.Status, BytesIn: r.BytesIn, BytesOut: r.BytesOut}
	err := e.st.Audit(state.AuditEntry{
		Time: r.Start, Client: sb.client(), Tool: "network", SandboxID: sb.ID,
		Summary:    fmt.Sprintf("%s %s %s (%d B in, %d B out)%s", r.Method, target, what, r.BytesIn, r.BytesOut, droppedNote(dropped)),
		DurationMS: r.Duration.Milliseconds(), Network: n,
	})
	if err != nil {
		e.log.Warn("write audit log", "err", err)
	}
}

// auditNetworkDropped writes how many of a sandbox's connections its
// budget kept out of the audit log, when its proxy closes.
func (e *Engine) auditNetworkDropped(sb *Sandbox, dropped int) {
	if e.st == nil {
		return
	}
	err := e.st.Audit(state.AuditEntry{Time: time.Now(), Client: sb.client(), Tool: "network", SandboxID: sb.ID,
		Summary: "proxy closed" + droppedNote(dropped)})
	if err != nil {
		e.log.Warn("write audit log", "err", err)
	}
}

func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d connections before this were not logged (over %d at once, then one each %s)", n, networkAuditBurst, networkAuditEvery)
}
