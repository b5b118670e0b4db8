package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// previewRunner is the runners key of a sandbox's previews (package
// preview): closing the runners (stop, expiry, reaping, the container's
// death, Close) closes them.
const previewRunner = "expose"

type previewSet struct{ *preview.Set }

func (p previewSet) close() { p.Close() }

// Exposed lists the exposed ports of sandbox id, by port (none for a
// sandbox this engine does not own). It is apart from Info, which the
// tray and window compare by value.
func (e *Engine) Exposed(id string) []preview.Exposure {
	e.mu.Lock()
	sb := e.boxes[id]
	e.mu.Unlock()
	if sb != nil {
		if x := e.previews(sb, false); x != nil {
			return x.List()
		}
	}
	return []preview.Exposure{}
}

// Expose makes Port on sandbox id's loopback reachable at a URL on the
// host's loopback (the same URL again if it already is).
func (e *Engine) Expose(ctx context.Context, id string, req preview.ExposeRequest) (preview.Exposure, error) {
	if req.Port < 1 || req.Port > 65535 {
		return preview.Exposure{}, fmt.Errorf("%w: port must be between 1 and 65535 (got %d)", ErrInvalid, req.Port)
	}
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return preview.Exposure{}, err
	}
	res, err := preview.Exposure{}, preview.ErrClosed // while sb is being removed
	if x := e.previews(sb, true); x != nil {
		res, err = x.Expose(ctx, req)
	}
	if errors.Is(err, preview.ErrClosed) {
		return preview.Exposure{}, fmt.Errorf("%w: sandbox %s is stopping", ErrNotFound, id)
	}
	return res, err
}

// Unexpose closes the preview of Port in sandbox id; it reports whether
// there was one.
func (e *Engine) Unexpose(ctx context.Context, id string, req preview.ExposeRequest) (preview.UnexposeResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return preview.UnexposeResult{}, err
	}
	if x := e.previews(sb, false); x != nil {
		return x.Unexpose(req), nil
	}
	return preview.UnexposeResult{}, nil
}

// previews returns sb's previews (made on first use when create), or nil.
func (e *Engine) previews(sb *Sandbox, create bool) *preview.Set {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	x, ok := sb.runners[previewRunner].(previewSet)
	if sb.removing || !ok && !create {
		return nil
	}
	if !ok {
		if sb.runners == nil {
			sb.runners = map[string]residentRunner{}
		}
		x = previewSet{preview.NewSet(preview.Config{ID: sb.ID, Log: e.log,
			Ready: func(ctx context.Context) error { _, err := e.previewAgent(ctx, sb); return err },
			Dial: func(ctx context.Context, port int) (net.Conn, error) {
				c, err := e.previewAgent(ctx, sb)
				if err != nil {
					return nil, err
				}
				s, err := c.Dial(ctx, port, proxyBusyRoom)
				if err != nil {
					return nil, err // not a nil *Stream in a net.Conn
				}
				return s, nil
			},
			Used:    func() { sb.mu.Lock(); sb.lastUsed = time.Now(); sb.mu.Unlock(); e.record(sb, true) },
			Changed: func() { e.record(sb, true) },
		})}
		sb.runners[previewRunner] = x
	}
	return x.Set
}

// previewAgent returns sb's agent when it can carry previews.
func (e *Engine) previewAgent(ctx context.Context, sb *Sandbox) (*agentconn.Conn, error) {
	c := e.agentFor(ctx, sb)
	if c == nil {
		_, why := sb.execPath()
		if why == "" {
			why = "the engine cannot attach to it"
		}
		return nil, fmt.Errorf("%w (%s)", preview.ErrNoAgent, why)
	}
	if !c.Streams() {
		return nil, fmt.Errorf("%w: %w", preview.ErrNoAgent, agentconn.ErrNoStreams)
	}
	return c, nil
}
