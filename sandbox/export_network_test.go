package sandbox

import (
	"context"
	"net"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
)

// ServeProxyForTest serves conn with sandbox id's allowlist proxy, as if
// its agent had carried the connection from the sandbox's loopback: the
// fake backend's sandboxes have no agent, so the test makes id an
// allowlist sandbox (with the config's entries) first.
func ServeProxyForTest(ctx context.Context, e *Engine, id string, conn net.Conn) error {
	sb, err := e.Get(id)
	if err != nil {
		return err
	}
	sb.mu.Lock()
	sb.Network = NetworkAllowlist
	sb.mu.Unlock()
	sp := sb.proxy(true, func() *netglue.Proxy { return e.newProxy(sb) })
	if sp == nil {
		return ErrNotFound
	}
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	e.serveProxy(sb, sp, conn)
	return nil
}
