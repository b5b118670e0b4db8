package mcpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
)

// deliveryTimeout bounds how long a tool call waits, before it returns its
// result, for its progress notifications to be written to its response
// stream. Zero turns the wait off; tests do that to show the race it
// closes (set it before serving).
var deliveryTimeout = 2 * time.Second

// Why a call waits for its progress to be written:
//
// mcp-go's streamable HTTP transport writes a request's notifications from
// a forwarder goroutine, which takes a notification off the session's queue
// and then waits for the response lock. When the call returns, the request
// path takes that lock, writes what is still queued, marks the request
// done and writes the result; a forwarder that took the last notification
// off the queue just before but got the lock just after sees the request
// done and drops it. (With an event store mcp-go records it instead, but a
// 2026-07-28 request is never resumable.)
//
// So every POST carries a delivery: trackDelivery counts the progress
// notifications actually written to the response, and progress.flush waits
// until all it queued are out. Then nothing is in flight when the call
// returns, and the result can neither overtake nor drop its progress.

// delivery counts the progress notifications written to one response.
type delivery struct {
	log *slog.Logger

	mu      sync.Mutex
	written int
	changed chan struct{} // closed and replaced at each write
}

type deliveryKey struct{}

// trackDelivery gives every request a delivery, in its context and
// watching its response writer.
func trackDelivery(log *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		d := &delivery{log: log, changed: make(chan struct{})}
		dw := &deliveryWriter{ResponseWriter: w, d: d}
		// What the call took of the memory budget is held until its
		// answer is written (see output.WithMemHold).
		ctx, release := output.WithMemHold(context.WithValue(r.Context(), deliveryKey{}, d))
		defer release()
		next.ServeHTTP(dw, r.WithContext(ctx))
	})
}

// carryDelivery is mcp-go's HTTP context function: it hands the request's
// delivery on to the context tool handlers get.
func carryDelivery(ctx context.Context, r *http.Request) context.Context {
	if d, ok := r.Context().Value(deliveryKey{}).(*delivery); ok {
		ctx = context.WithValue(ctx, deliveryKey{}, d)
	}
	return output.CarryMemHold(ctx, r.Context())
}

// deliveryFrom returns the call's delivery, or nil when the call did not
// come over HTTP (stdio orders its output itself).
func deliveryFrom(ctx context.Context) *delivery {
	d, _ := ctx.Value(deliveryKey{}).(*delivery)
	return d
}

func (d *delivery) wrote() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.written++
	close(d.changed)
	d.changed = make(chan struct{})
}

// await waits until n progress notifications have been written, ctx is
// done (the client went away or cancelled: nothing will be read anyway),
// or deliveryTimeout has passed. A nil delivery does not wait.
func (d *delivery) await(ctx context.Context, n int) {
	if d == nil || n == 0 || deliveryTimeout <= 0 {
		return
	}
	timer := time.NewTimer(deliveryTimeout)
	defer timer.Stop()
	for {
		d.mu.Lock()
		written, changed := d.written, d.changed
		d.mu.Unlock()
		if written >= n {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		case <-timer.C:
			d.log.Warn("http: progress notifications not written in time; the result goes out without them", "queued", n, "written", written, "waited", deliveryTimeout)
			return
		}
	}
}

// deliveryWriter passes a response through and counts the progress
// notifications in it once they are written. mcp-go writes each SSE event
// in one Write, but the writer does not rely on it: it cuts events at the
// blank line that ends them.
type deliveryWriter struct {
	http.ResponseWriter
	d       *delivery
	pending []byte // the start of an event not yet complete
}

func (w *deliveryWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if strings.HasPrefix(w.Header().Get("Content-Type"), "text/event-stream") {
		w.scan(p[:n])
	}
	return n, err
}

// Flush lets mcp-go stream (it streams only to a writer that flushes).
func (w *deliveryWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection (mcp-go sets
// write deadlines through it).
func (w *deliveryWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

var eventEnd = []byte("\n\n")

func (w *deliveryWriter) scan(p []byte) {
	w.pending = append(w.pending, p...)
	rest := w.pending
	for {
		i := bytes.Index(rest, eventEnd)
		if i < 0 {
			break
		}
		if isProgressEvent(rest[:i]) {
			w.d.wrote()
		}
		rest = rest[i+len(eventEnd):]
	}
	w.pending = append(w.pending[:0], rest...)
}

// isProgressEvent reports whether an SSE event carries a
// notifications/progress message.
func isProgressEvent(event []byte) bool {
	if !bytes.Contains(event, []byte("notifications/progress")) {
		return false // the common case, without decoding a large result
	}
	var data []byte
	for _, line := range bytes.Split(event, []byte("\n")) {
		if v, ok := bytes.CutPrefix(bytes.TrimSuffix(line, []byte("\r")), []byte("data:")); ok {
			if len(data) > 0 {
				data = append(data, '\n')
			}
			data = append(data, bytes.TrimPrefix(v, []byte(" "))...)
		}
	}
	var m struct {
		Method string `json:"method"`
	}
	return json.Unmarshal(data, &m) == nil && m.Method == "notifications/progress"
}
