package sandbox

import (
	"context"
	"net"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// ListenForTest has sandbox id's agent listen on port of its loopback and
// hand each connection to handle (what a proxy in the sandbox will need).
func ListenForTest(ctx context.Context, e *Engine, id string, port int, handle func(net.Conn)) (int, error) {
	sb, err := e.Get(id)
	if err != nil {
		return 0, err
	}
	c := e.agentFor(ctx, sb)
	if c == nil {
		return 0, preview.ErrNoAgent
	}
	_, bound, err := c.Listen(ctx, port, handle)
	return bound, err
}

// AgentWindowForTest returns the credit the server gives each stream of
// sandbox id's agent: the window its ready frame announced, in bounds.
func AgentWindowForTest(ctx context.Context, e *Engine, id string) (int, error) {
	sb, err := e.Get(id)
	if err != nil {
		return 0, err
	}
	c := e.agentFor(ctx, sb)
	if c == nil {
		return 0, preview.ErrNoAgent
	}
	return c.Window(), nil
}
