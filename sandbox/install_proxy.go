package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
)

// errHelperAgent: the helper's only way out is its proxy, which rides
// the command agent; an install never falls back to a network of its own.
var errHelperAgent = errors.New("package installs need the command agent inside the install helper (it carries the helper's only network, a proxy to the package indexes), and it cannot run there")

// helperProxy is the Started hook of sb's install helper: it starts the
// agent inside the helper and serves the helper's proxy on its loopback,
// allowed entries only, recording what was reached.
func (e *Engine) helperProxy(sb *Sandbox, entries []netproxy.Entry, maxConns int, reached *netglue.Reached) func(context.Context, string) (func(), error) {
	return func(ctx context.Context, helperID string) (func(), error) {
		at, ok := e.be.(Attacher)
		if !ok {
			return nil, fmt.Errorf("%w: %w (the backend cannot attach)", ErrPolicy, errHelperAgent)
		}
		// A stand-in for the helper: never in e.boxes, so nothing done to
		// it touches sb.
		h := &Sandbox{ID: sb.ID + "-install", ContainerID: helperID, User: helperUser(sb.User)}
		sctx, cancel := context.WithTimeout(ctx, agentStartTimeout)
		c, err := e.startAgent(sctx, at, h)
		cancel()
		if errors.Is(err, errInterpUnusable) {
			return nil, fmt.Errorf("%w: %w: %v", ErrPolicy, errHelperAgent, err)
		}
		if err != nil {
			return nil, fmt.Errorf("start the install helper's agent: %w", err)
		}
		p := netproxy.New(netproxy.Options{Entries: entries, MaxConns: maxConns, Audit: reached.Add, AllowHint: netglue.InstallAllowHint})
		pctx, stop := context.WithCancel(context.Background())
		lctx, cancel := context.WithTimeout(ctx, proxyStartTimeout)
		_, _, err = c.listen(lctx, netglue.ProxyPort, func(conn net.Conn) { p.Serve(pctx, netglue.Linger(conn)) })
		cancel()
		if err != nil {
			stop()
			c.close()
			return nil, fmt.Errorf("the install helper's proxy: %w", err)
		}
		return func() { stop(); c.close() }, nil
	}
}
