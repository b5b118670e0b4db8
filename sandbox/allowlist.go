package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// proxyRunner is the runners key of a sandbox's proxy: closing the
// runners (stop, expiry, reaping, the container's death, Close) ends its
// connections.
const proxyRunner = "netproxy"

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

// sandboxProxy is an allowlist sandbox's proxy (sandbox/netglue), kept
// among its runners so that closing them ends its connections.
type sandboxProxy struct{ *netglue.Proxy }

func (sp sandboxProxy) close() { sp.Close() }

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
		n.Allowed = netglue.EntryStrings(e.proxyEntries(sb))
		return n
	}
	n.Allowed = netglue.EntryStrings(sp.Entries())
	st := sp.Stats()
	n.Stats = &st
	return n
}

// traffic is n as a state record holds it, or nil before its proxy.
func (n NetworkInfo) traffic() *state.NetworkSummary { return netglue.Traffic(n.Allowed, n.Stats) }

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
func (sb *Sandbox) proxy(create bool, newProxy func() *netglue.Proxy) *netglue.Proxy {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil
	}
	sp, ok := sb.runners[proxyRunner].(sandboxProxy)
	if !ok && create {
		if sb.runners == nil {
			sb.runners = map[string]residentRunner{}
		}
		sp = sandboxProxy{newProxy()}
		sb.runners[proxyRunner] = sp
	}
	return sp.Proxy
}

// newProxy makes sb's proxy: its entries, network.max_connections, the
// person-asking seam and the audit log.
func (e *Engine) newProxy(sb *Sandbox) *netglue.Proxy {
	cfg := e.cfg.Current()
	o := netglue.ProxyOptions{
		Entries:  e.proxyEntries(sb),
		MaxConns: proxyMaxConns(cfg.Network.MaxConnections),
		Own:      len(sb.allowDomains) > 0,
		Audit: func(r netproxy.Record, line bool, dropped int) {
			if line {
				e.audit(netglue.AuditEntry(r, sb.client(), sb.ID, dropped))
			}
			e.record(sb, true) // a connection may carry several requests
		},
		Closed: func(dropped int) { e.audit(netglue.ClosedEntry(time.Now(), sb.client(), sb.ID, dropped)) },
	}
	if e.ask != nil {
		o.Ask = func(ctx context.Context, host string, port int) (netproxy.Decision, error) {
			if !e.cfg.Current().Network.Ask {
				return netproxy.Deny, errors.New("network.ask is false, so no person is asked")
			}
			return e.ask(ctx, AskRequest{SandboxID: sb.ID, Language: sb.Language, Client: sb.client(), Host: host, Port: port})
		}
	}
	return netglue.NewProxy(o)
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

// startProxy has agent c serve sb's proxy inside sb. It is called after
// every start of sb's agent.
func (e *Engine) startProxy(ctx context.Context, sb *Sandbox, c *agentconn.Conn) error {
	sp := sb.proxy(true, func() *netglue.Proxy { return e.newProxy(sb) })
	if sp == nil {
		return fmt.Errorf("%w: sandbox %s is stopping", ErrNotFound, sb.ID)
	}
	return sp.Start(ctx, c, func(conn net.Conn) { e.serveProxy(sb, sp, conn) })
}

// serveProxy serves one connection from inside sb with its proxy. The
// record's counters are written when it opens and when it ends (and
// after each request, see newProxy); the recorder coalesces them to
// about one write a second, however many connections come.
func (e *Engine) serveProxy(sb *Sandbox, sp *netglue.Proxy, conn net.Conn) {
	if !sp.Own() {
		sp.SetEntries(e.proxyEntries(sb))
	}
	e.record(sb, true)
	sp.Serve(conn)
	e.record(sb, true) // no longer open
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
	if sp := sb.proxy(false, nil); sp == nil || !sp.Listening() {
		return fmt.Errorf("%w: the proxy did not start inside the sandbox (the server's log says why); the sandbox is given no network instead", ErrAllowlistUnavailable)
	}
	return nil
}

// audit writes a proxy's audit line.
func (e *Engine) audit(a state.AuditEntry) {
	if e.st == nil {
		return
	}
	if err := e.st.Audit(a); err != nil {
		e.log.Warn("write audit log", "err", err)
	}
}

// NetworkLog returns sandbox id's newest proxied connections, one a line
// (time, method, host:port, allowed or why refused, bytes each way,
// duration), for its logs resource; "" when it has had none or is not an
// allowlist sandbox this engine owns.
func (e *Engine) NetworkLog(id string) string {
	e.mu.Lock()
	sb := e.boxes[id]
	e.mu.Unlock()
	if sb == nil {
		return ""
	}
	sp := sb.proxy(false, nil)
	if sp == nil {
		return ""
	}
	return sp.Log()
}

// errHelperAgent: the helper's only way out is its proxy, which rides
// the command agent; an install never falls back to a network of its own.
var errHelperAgent = errors.New("package installs need the command agent inside the install helper (it carries the helper's only network, a proxy to the package indexes), and it cannot run there")

// helperProxy is the Started hook of sb's install helper: it starts the
// agent inside the helper and serves the helper's proxy on its loopback,
// allowed entries only, recording what was reached.
func (e *Engine) helperProxy(sb *Sandbox, entries []netproxy.Entry, maxConns int, reached *netglue.Reached) func(context.Context, string) (func(), error) {
	return func(ctx context.Context, helperID string) (func(), error) {
		// A stand-in for the helper: never in e.boxes, so nothing done to
		// it touches sb.
		h := &Sandbox{ID: sb.ID + "-install", ContainerID: helperID, User: helperUser(sb.User)}
		c, err := e.startAgent(ctx, h)
		if errors.Is(err, agentconn.ErrUnusable) {
			return nil, fmt.Errorf("%w: %w: %v", ErrPolicy, errHelperAgent, err)
		}
		if err != nil {
			return nil, fmt.Errorf("start the install helper's agent: %w", err)
		}
		return netglue.ServeInstall(ctx, c, netglue.InstallProxyRequest{Entries: entries, MaxConns: maxConns, Reached: reached})
	}
}
