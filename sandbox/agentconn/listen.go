package agentconn

import (
	"context"
	"fmt"
	"net"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// listener is a port the agent listens on, on the sandbox's loopback:
// each connection it accepts comes to the server as a stream, handed to
// handle in a goroutine of its own (which must close it).
type listener struct {
	id      int
	handle  func(net.Conn)
	pending bool
	answer  chan streamBody // the Listening, once
}

// Listen has the agent listen on port (0: one it picks) of the sandbox's
// loopback and hand each connection it accepts to handle, as a stream
// (a net.Conn with CloseWrite), until Unlisten or the connection's end.
// The streams count towards MaxStreams: one beyond it is refused
// (reset) at once. It returns the listener's id and the port.
func (c *Conn) Listen(ctx context.Context, port int, handle func(net.Conn)) (id, bound int, err error) {
	m := &c.mux
	m.mu.Lock()
	if !m.ok {
		m.mu.Unlock()
		return 0, 0, ErrNoStreams
	}
	m.lastListener++
	l := &listener{id: m.lastListener, handle: handle, pending: true, answer: make(chan streamBody, 1)}
	m.listeners[l.id] = l
	m.mu.Unlock()
	if err := c.send(ctx, agent.KindListen, agent.Listen{ID: l.id, Port: port}); err != nil {
		c.Unlisten(l.id)
		return 0, 0, diedOr(err)
	}
	select {
	case a := <-l.answer:
		if a.err != "" {
			c.forgetListener(l.id)
			return 0, 0, fmt.Errorf("listen on port %d inside the sandbox: %s", port, clipString(a.err, 256))
		}
		return l.id, a.port, nil
	case <-c.dead:
		return 0, 0, c.died()
	case <-ctx.Done():
		c.Unlisten(l.id)
		return 0, 0, ctx.Err()
	}
}

// Unlisten closes listener id (streams it opened go on).
func (c *Conn) Unlisten(id int) {
	c.forgetListener(id)
	if !c.Gone() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), streamWriteTimeout)
			defer cancel()
			_ = c.send(ctx, agent.KindUnlisten, agent.StreamID{ID: id})
		}()
	}
}

func (c *Conn) forgetListener(id int) {
	c.mux.mu.Lock()
	delete(c.mux.listeners, id)
	c.mux.mu.Unlock()
}

// onListening takes the agent's answer to a listen: about a listener never
// asked for, or a second one, it ends the connection.
func (c *Conn) onListening(id int, b streamBody) {
	m := &c.mux
	m.mu.Lock()
	l := m.listeners[id]
	asked := m.ok && id > 0 && id <= m.lastListener
	ok := l != nil && l.pending
	if ok {
		l.pending = false
		l.answer <- b
	}
	m.mu.Unlock()
	switch {
	case !asked || l != nil && !ok:
		c.fail(fmt.Errorf("%w: a listening frame for listener %d, not asked for", runner.ErrProtocol, id))
	case l == nil && b.err == "":
		c.Unlisten(id) // given up while the agent answered
	}
}

// onAccept opens a stream for a connection the agent accepted: ids must
// be even and increasing, and name a listener the server asked for; a
// connection for a listener since closed, or beyond MaxStreams, is
// reset at once.
func (c *Conn) onAccept(id int, b streamBody) {
	m := &c.mux
	m.mu.Lock()
	if !m.ok || id <= m.lastAgent || id%2 != 0 || b.listener <= 0 || b.listener > m.lastListener {
		m.mu.Unlock()
		c.fail(fmt.Errorf("%w: an accept frame for stream %d of listener %d", runner.ErrProtocol, id, b.listener))
		return
	}
	m.lastAgent = id
	l := m.listeners[b.listener]
	if l == nil || l.pending || len(m.streams) >= MaxStreams || !m.budget.take() {
		m.mu.Unlock()
		go c.sendReset(id)
		return
	}
	s := &Stream{c: c, id: id, sig: make(chan struct{}), dialed: make(chan string, 1), avail: agent.StreamWindow, window: m.window, credit: m.window}
	m.streams[id] = s
	m.mu.Unlock()
	go l.handle(s)
}
