package mcpserver

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// progressInterval throttles progress notifications to about ten a second.
const progressInterval = 100 * time.Millisecond

// progressTail is how much of the newest output one notification carries.
const progressTail = 2048

// progress sends notifications/progress for one call that asked for them
// (its request carried a progress token). Output is gathered and sent at
// most every progressInterval; flush sends what is pending before the
// call's result. After the call's context ends nothing more is sent.
type progress struct {
	srv   *server.MCPServer
	ctx   context.Context
	token mcp.ProgressToken

	mu      sync.Mutex
	seq     float64
	pending []byte
	status  string
	last    time.Time
	timer   *time.Timer
	done    bool

	queued   int       // notifications handed to the session (under mu)
	delivery *delivery // over HTTP: where flush waits for them to be written
}

// newProgress returns a reporter for the call, or nil when the client did
// not ask for progress. A nil *progress ignores every call.
func newProgress(ctx context.Context, req mcp.CallToolRequest) *progress {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	return &progress{srv: server.ServerFromContext(ctx), ctx: ctx, token: req.Params.Meta.ProgressToken, delivery: deliveryFrom(ctx)}
}

// output records a chunk of output and sends it when the throttle allows.
func (p *progress) output(_ string, chunk []byte) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.pending = append(p.pending, chunk...)
	if len(p.pending) > progressTail {
		p.pending = append(p.pending[:0], p.pending[len(p.pending)-progressTail:]...)
	}
	p.scheduleLocked()
}

// setStatus reports a status line (e.g. image pull progress).
func (p *progress) setStatus(msg string) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.status = msg
	p.scheduleLocked()
}

// waiting returns what tells the client that the call waits for another
// in the same sandbox, or nil when it did not ask for progress.
func (p *progress) waiting() func(string) {
	if p == nil {
		return nil
	}
	return p.setStatus
}

func (p *progress) scheduleLocked() {
	wait := progressInterval - time.Since(p.last)
	if wait <= 0 {
		p.sendLocked()
		return
	}
	if p.timer == nil {
		p.timer = time.AfterFunc(wait, func() {
			p.mu.Lock()
			defer p.mu.Unlock()
			p.timer = nil
			if !p.done {
				p.sendLocked()
			}
		})
	}
}

// sendLocked sends what is pending. It holds p.mu while queueing the
// notification, so notifications leave in order.
func (p *progress) sendLocked() {
	msg := p.status
	if len(p.pending) > 0 {
		msg = string(p.pending)
	}
	if msg == "" || p.ctx.Err() != nil || p.srv == nil {
		return
	}
	p.pending, p.status = nil, ""
	p.seq++
	p.last = time.Now()
	params := map[string]any{"progressToken": p.token, "progress": p.seq, "message": msg}
	for i := 0; ; i++ {
		err := p.srv.SendNotificationToClient(p.ctx, "notifications/progress", params)
		if err == nil {
			p.queued++
		}
		if !errors.Is(err, server.ErrNotificationChannelBlocked) || i >= 50 {
			return
		}
		// The queue is full: wait for the writer rather than drop it.
		time.Sleep(2 * time.Millisecond)
	}
}

// flush sends what is pending and stops the reporter. Call it before
// returning the call's result. Over HTTP it then waits until every
// notification it queued has been written (see delivery).
func (p *progress) flush() {
	if p == nil {
		return
	}
	p.mu.Lock()
	if p.done {
		p.mu.Unlock()
		return
	}
	if p.timer != nil {
		p.timer.Stop()
		p.timer = nil
	}
	if len(p.pending) > 0 || p.status != "" {
		p.sendLocked()
	}
	p.done = true
	queued := p.queued
	p.mu.Unlock()
	p.delivery.await(p.ctx, queued)
}
