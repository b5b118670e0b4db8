package netglue

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// Listener is one listen, inside a sandbox, that carries connections to a
// Proxy (a listen of the sandbox's command agent).
type Listener interface {
	// Gone reports whether what carries the connections has ended.
	Gone() bool
	// Close stops the listen.
	Close()
}

// ProxyOptions configures a sandbox's Proxy.
type ProxyOptions struct {
	Entries  []netproxy.Entry
	MaxConns int
	// Own is set when the sandbox named its own allow_domains (the
	// engine then never replaces Entries with the config's).
	Own bool
	// Ask is netproxy.Options.Ask.
	Ask func(ctx context.Context, host string, port int) (netproxy.Decision, error)
	// Audit hears every connection, after the Proxy's log; line says
	// whether the audit budget lets it write an audit line, and dropped
	// how many connections it kept out of the audit log since the last.
	Audit func(r netproxy.Record, line bool, dropped int)
	// Closed hears, on Close, how many connections the budget kept out
	// since the last line (when any).
	Closed func(dropped int)
	// Now is the clock of the audit budget (default time.Now).
	Now func() time.Time
}

// Proxy is an allowlist sandbox's proxy: one netproxy.Proxy for the
// sandbox's life, served on whichever listen carries it, with the
// sandbox's audit budget and connection log.
type Proxy struct {
	p      *netproxy.Proxy
	own    bool
	ctx    context.Context
	cancel context.CancelFunc
	audit  AuditBudget
	log    Log
	closed func(dropped int)

	mu sync.Mutex
	l  Listener
}

// NewProxy returns a sandbox's proxy; Close ends it.
func NewProxy(o ProxyOptions) *Proxy {
	if o.Now == nil {
		o.Now = time.Now
	}
	ctx, cancel := context.WithCancel(context.Background())
	sp := &Proxy{own: o.Own, ctx: ctx, cancel: cancel, closed: o.Closed}
	sp.p = netproxy.New(netproxy.Options{
		Entries: o.Entries, MaxConns: o.MaxConns, Ask: o.Ask,
		Audit: func(r netproxy.Record) {
			sp.log.Add(r)
			ok, dropped := sp.audit.Take(o.Now())
			if o.Audit != nil {
				o.Audit(r, ok, dropped)
			}
		},
	})
	return sp
}

// Own reports whether the sandbox named its own allow_domains.
func (sp *Proxy) Own() bool { return sp.own }

// Entries returns what the proxy allows now.
func (sp *Proxy) Entries() []netproxy.Entry { return sp.p.Entries() }

// SetEntries replaces what the proxy allows (the config's, read again).
func (sp *Proxy) SetEntries(es []netproxy.Entry) { sp.p.SetEntries(es) }

// Stats returns the proxy's counters.
func (sp *Proxy) Stats() netproxy.Stats { return sp.p.Stats() }

// Log returns the newest connections, as Log.String does.
func (sp *Proxy) Log() string { return sp.log.String() }

// Serve serves one connection from inside the sandbox until it ends or
// the proxy closes.
func (sp *Proxy) Serve(conn net.Conn) { sp.p.Serve(sp.ctx, conn) }

// Listening reports whether a listen carries the proxy now.
func (sp *Proxy) Listening() bool {
	sp.mu.Lock()
	defer sp.mu.Unlock()
	return sp.l != nil && !sp.l.Gone() && sp.ctx.Err() == nil
}

// Listen makes l the listen that carries the proxy and returns the one it
// replaces (nil if none), for the caller to close when it is another's.
// A proxy already closed closes l.
func (sp *Proxy) Listen(l Listener) (old Listener) {
	sp.mu.Lock()
	old, sp.l = sp.l, l
	sp.mu.Unlock()
	if sp.ctx.Err() != nil { // closed meanwhile
		l.Close()
	}
	return old
}

// Close ends the proxy's connections and its listen.
func (sp *Proxy) Close() {
	sp.cancel()
	if d := sp.audit.Flush(); d > 0 && sp.closed != nil {
		sp.closed(d)
	}
	sp.mu.Lock()
	l := sp.l
	sp.l = nil
	sp.mu.Unlock()
	if l != nil {
		l.Close()
	}
}
