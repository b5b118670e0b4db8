package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
)

// outbound carries the server's own requests to a stdio client
// (elicitation/create) and routes the client's responses back. Its ids
// are strings of its own ("mcp-sandbox-N"), so a response with any other
// id is dropped; at most maxOutbound wait at once.
type outbound struct {
	mu      sync.Mutex
	ctx     context.Context
	send    func(context.Context, []byte)
	next    int
	pending map[string]chan json.RawMessage
}

const maxOutbound = 16

// errSessionEnded: the session ended before the client answered.
var errSessionEnded = errors.New("the client's session ended")

func (o *outbound) start(ctx context.Context, send func(context.Context, []byte)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.ctx, o.send, o.pending = ctx, send, map[string]chan json.RawMessage{}
}

// call sends one request and waits for its response, ctx or the session's end.
func (o *outbound) call(ctx context.Context, method string, params any) (json.RawMessage, error) {
	o.mu.Lock()
	if o.send == nil || len(o.pending) >= maxOutbound {
		o.mu.Unlock()
		return nil, fmt.Errorf("%s: the session cannot take another request now", method)
	}
	o.next++
	id := "mcp-sandbox-" + strconv.Itoa(o.next)
	ch := make(chan json.RawMessage, 1)
	o.pending[id] = ch
	sessCtx, send := o.ctx, o.send
	o.mu.Unlock()
	defer func() {
		o.mu.Lock()
		delete(o.pending, id)
		o.mu.Unlock()
	}()

	msg, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "id": id, "method": method, "params": params})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	send(sessCtx, msg)
	select {
	case raw := <-ch:
		return raw, nil
	case <-ctx.Done():
		// Tell the client to stop asking: nobody waits for the answer.
		if note, err := json.Marshal(map[string]any{"jsonrpc": mcp.JSONRPC_VERSION, "method": string(mcp.MethodNotificationCancelled),
			"params": map[string]any{"requestId": id, "reason": "no answer in time"}}); err == nil {
			send(sessCtx, note)
		}
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	case <-sessCtx.Done():
		return nil, fmt.Errorf("%s: %w", method, errSessionEnded)
	}
}

// answer hands a response line to the request it answers, if any waits.
func (o *outbound) answer(raw []byte, id any) {
	key, ok := id.(string)
	if !ok {
		return
	}
	o.mu.Lock()
	ch := o.pending[key]
	delete(o.pending, key)
	o.mu.Unlock()
	if ch != nil {
		ch <- append(json.RawMessage(nil), raw...)
	}
}

// RequestElicitation asks the stdio client (server.SessionWithElicitation).
func (s *session) RequestElicitation(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	raw, err := s.requests.call(ctx, string(mcp.MethodElicitationCreate), req.Params)
	if err != nil {
		return nil, err
	}
	var resp struct {
		Result *mcp.ElicitationResult `json:"result"`
		Error  *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &resp); err != nil {
		return nil, fmt.Errorf("elicitation: the client's answer: %w", err)
	}
	if resp.Error != nil {
		// The client's words, cleaned and cut: they go to the log.
		return nil, fmt.Errorf("elicitation: the client answered with error %d: %s", resp.Error.Code, printable.Clean(resp.Error.Message, 200))
	}
	if resp.Result == nil {
		return nil, errors.New("elicitation: the client's answer holds no result")
	}
	return resp.Result, nil
}
