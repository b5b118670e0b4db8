package mcpserver

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
)

// flights are the requests in flight, so that one its client cancels
// (notifications/cancelled) stops and gets no response: the MCP
// specification says the receiver SHOULD NOT answer it, and a client that
// gave up on a call has nothing to do with its result. mcp-go stops a
// cancelled call but still writes its response; the transports ask
// flights whether to write it. A scope keeps clients apart: stdio has one
// client (scope ""), HTTP one per session id, and a client can cancel
// only its own requests.
type flights struct {
	mu  sync.Mutex
	ids map[string]*flight
}

// flight is one request in flight.
type flight struct {
	key       string
	cancel    context.CancelFunc
	cancelled bool
}

// begin records the request id as in flight and returns the context its
// handler runs under, which a cancellation ends. A second request with
// an id already in flight (a client's mistake) is not tracked: a
// cancellation of that id stays with the first.
func (f *flights) begin(ctx context.Context, scope string, id any) (context.Context, *flight) {
	ctx, cancel := context.WithCancel(ctx)
	fl := &flight{key: flightKey(scope, id), cancel: cancel}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids == nil {
		f.ids = map[string]*flight{}
	}
	if _, taken := f.ids[fl.key]; !taken {
		f.ids[fl.key] = fl
	}
	return ctx, fl
}

// end forgets fl and reports whether its response is to be dropped.
func (f *flights) end(fl *flight) (cancelled bool) {
	fl.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ids[fl.key] == fl {
		delete(f.ids, fl.key)
	}
	return fl.cancelled
}

// cancelFrom reads a notifications/cancelled message of scope's client
// and cancels the request it names, if that is in flight. It reports
// whether raw was a cancellation at all.
func (f *flights) cancelFrom(scope string, raw []byte) bool {
	var n struct {
		Method string `json:"method"`
		Params struct {
			RequestID any `json:"requestId"`
		} `json:"params"`
	}
	if json.Unmarshal(raw, &n) != nil || n.Method != string(mcp.MethodNotificationCancelled) {
		return false
	}
	if n.Params.RequestID == nil {
		return true
	}
	f.mu.Lock()
	fl := f.ids[flightKey(scope, n.Params.RequestID)]
	if fl != nil {
		fl.cancelled = true
	}
	f.mu.Unlock()
	if fl != nil {
		fl.cancel()
	}
	return true
}

// flightKey is a JSON-RPC id of scope's client as a map key: the id's
// JSON, so that the number 1 and the string "1" stay two ids.
func flightKey(scope string, id any) string {
	b, _ := json.Marshal(id)
	return scope + "\x00" + string(b)
}
