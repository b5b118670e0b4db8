package netglue

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// StartTimeout bounds the agent's answer to a proxy's listen.
const StartTimeout = 10 * time.Second

// Agent is what carries a proxy's connections out of a sandbox: its
// command agent (an agentconn.Conn), listening on the sandbox's loopback.
type Agent interface {
	Listen(ctx context.Context, port int, handle func(net.Conn)) (id, bound int, err error)
	Unlisten(id int)
	Gone() bool
	Close()
}

// agentListen is a proxy's listen on an Agent.
type agentListen struct {
	a  Agent
	id int
}

func (l agentListen) Gone() bool { return l.a.Gone() }
func (l agentListen) Close()     { l.a.Unlisten(l.id) }

// Start has a listen on ProxyPort inside the sandbox and hand each
// connection to serve; the listen replaces the proxy's last one (closed
// when it was another agent's).
func (sp *Proxy) Start(ctx context.Context, a Agent, serve func(net.Conn)) error {
	ctx, cancel := context.WithTimeout(ctx, StartTimeout)
	defer cancel()
	id, _, err := a.Listen(ctx, ProxyPort, func(conn net.Conn) { serve(Linger(conn)) })
	if err != nil {
		return fmt.Errorf("the proxy inside the sandbox: %w", err)
	}
	if old, ok := sp.Listen(agentListen{a, id}).(agentListen); ok && old.a != a {
		old.Close()
	}
	return nil
}

// InstallProxyRequest is an install helper's proxy: the allowed entries
// only, reached ones recorded.
type InstallProxyRequest struct {
	Entries  []netproxy.Entry
	MaxConns int
	Reached  *Reached
}

// ServeInstall serves an install helper's proxy on a's listen inside the
// helper; stop ends its connections and a.
func ServeInstall(ctx context.Context, a Agent, req InstallProxyRequest) (stop func(), err error) {
	p := netproxy.New(netproxy.Options{Entries: req.Entries, MaxConns: req.MaxConns, Audit: req.Reached.Add, AllowHint: InstallAllowHint})
	pctx, cancel := context.WithCancel(context.Background())
	lctx, lcancel := context.WithTimeout(ctx, StartTimeout)
	_, _, err = a.Listen(lctx, ProxyPort, func(conn net.Conn) { p.Serve(pctx, Linger(conn)) })
	lcancel()
	if err != nil {
		cancel()
		a.Close()
		return nil, fmt.Errorf("the install helper's proxy: %w", err)
	}
	return func() { cancel(); a.Close() }, nil
}
