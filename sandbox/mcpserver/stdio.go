package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
)

// Limits of the stdio transport.
const (
	// maxMessageBytes is the largest JSON-RPC message read from a client;
	// a longer line is answered with an error and skipped, and the server
	// goes on.
	maxMessageBytes = 32 << 20
	// maxInFlight is how many requests run at once (tool calls included).
	maxInFlight = 64
	// notificationBuffer is the session's notification queue.
	notificationBuffer = 4096
	// writeTimeout bounds how long a write to the client may make no
	// progress: a client that takes nothing for that long has stopped
	// reading, and is treated as gone (the session ends and the server
	// cleans up). A long message to a slow client is fine as long as it
	// keeps taking writeChunk bytes at a time.
	writeTimeout = 30 * time.Second
	// writeChunk is the piece of a message written at a time; each one
	// taken restarts the writeTimeout clock.
	writeChunk = 64 << 10
	// shutdownWriteTimeout is the same bound once the session is ending.
	shutdownWriteTimeout = time.Second
)

// errClientGone ends a session whose client closed its end of the output
// or stopped reading it: the client left, as when its input ends.
var errClientGone = errors.New("the client closed its end of stdout or stopped reading it")

// ServeStdio serves MCP on in/out until in ends (the client went away) or
// ctx is done. Unlike mcp-go's stdio server, it writes every notification a
// request handler sent before that request's response: one goroutine owns
// out, and before writing a response it drains the notification queue,
// which holds everything the handler queued before it returned.
func (s *Server) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	sess := newSession("stdio")
	if err := s.mcp.RegisterSession(ctx, sess); err != nil {
		return fmt.Errorf("register session: %w", err)
	}
	defer s.mcp.UnregisterSession(context.WithoutCancel(ctx), sess.SessionID())

	ctx, cancel := context.WithCancel(s.mcp.WithContext(ctx, sess))
	defer cancel()

	w := &orderedWriter{out: out, responses: make(chan reply, maxInFlight), notes: sess.notifications, failed: make(chan struct{})}
	sess.requests.start(ctx, w.send)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		w.run(ctx)
	}()

	var wg sync.WaitGroup
	var inFlight flights
	sem := make(chan struct{}, maxInFlight)
	readErr := s.readMessages(ctx, in, func(raw []byte, id any, isRequest bool) {
		if id != nil && !isRequest {
			sess.requests.answer(raw, id)
			return
		}
		if !isRequest {
			// Notifications (cancelled, initialized) are handled in order,
			// so a cancellation is seen before later requests.
			inFlight.cancelFrom("", raw)
			if resp := s.handle(ctx, raw, id); resp != nil {
				w.send(ctx, resp)
			}
			return
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			return
		}
		wg.Add(1)
		rctx, fl := inFlight.begin(ctx, "", id)
		go func() {
			defer func() { <-sem; wg.Done() }()
			// What the call took of the memory budget is held until its
			// answer is written (see output.WithMemHold).
			hctx, release := output.WithMemHold(rctx)
			defer release()
			resp := s.handle(hctx, raw, id)
			if inFlight.end(fl) {
				return // cancelled by the client: no response
			}
			if resp != nil {
				w.sendWritten(ctx, resp)
			}
		}()
	}, w.send, w.failed)

	// The client is gone (or ctx ended): cancel what is still running and
	// give handlers a moment to finish killing their work.
	cancel()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		s.log.Warn("request handlers still running 30s after stdin closed")
	}
	<-writerDone
	if errors.Is(readErr, errClientGone) {
		s.log.Info("the client left", "why", readErr)
		return nil
	}
	if readErr != nil && !errors.Is(readErr, io.EOF) && !errors.Is(readErr, context.Canceled) {
		return readErr
	}
	return nil
}

// readMessages reads newline-delimited JSON-RPC messages and calls handle
// for each; a line that is not JSON or too long gets an error response.
// The goroutine that reads a message also hands it on: with stdin read
// through the poller (package server), dropping the hop to a second
// goroutine took the time from a line read to its handler from about 90
// to about 55 µs here after an idle spell. It stops handing messages on
// once readMessages has returned (ctx done, the client gone or the input
// ended), even while a read is still blocked.
func (s *Server) readMessages(ctx context.Context, in io.Reader, handle func(raw []byte, id any, isRequest bool), reply func(context.Context, []byte), failed <-chan struct{}) error {
	r := bufio.NewReaderSize(in, 64<<10)
	errc := make(chan error, 1)
	var mu sync.Mutex // held while a message is handed on
	stopped := false
	go func() {
		for {
			line, err := readLine(r, maxMessageBytes)
			if len(line) > 0 || errors.Is(err, errLineTooLong) {
				mu.Lock()
				if stopped {
					mu.Unlock()
					return
				}
				s.dispatch(ctx, line, handle, reply)
				mu.Unlock()
			}
			if err != nil && !errors.Is(err, errLineTooLong) {
				errc <- err
				return
			}
		}
	}()
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-failed:
		err = errClientGone
	case err = <-errc:
	}
	mu.Lock()
	stopped = true
	mu.Unlock()
	return err
}

// dispatch parses one line (nil: one too long) and hands it to handle, or
// answers it with an error.
func (s *Server) dispatch(ctx context.Context, line []byte, handle func(raw []byte, id any, isRequest bool), reply func(context.Context, []byte)) {
	if line == nil {
		reply(ctx, errorResponse(nil, mcp.INVALID_REQUEST, fmt.Sprintf("message larger than %d bytes", maxMessageBytes)))
		return
	}
	line = bytes.TrimSpace(line)
	if len(line) == 0 {
		return
	}
	var base struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(line, &base); err != nil {
		reply(ctx, errorResponse(nil, mcp.PARSE_ERROR, "parse error: "+err.Error()))
		return
	}
	hasID := len(base.ID) > 0 && string(base.ID) != "null"
	var id any
	if hasID {
		_ = json.Unmarshal(base.ID, &id)
	}
	if base.Method == "" {
		if hasID {
			// A response to a request of ours (elicitation).
			handle(line, id, false)
		}
		return
	}
	handle(line, id, hasID)
}

var errLineTooLong = errors.New("line too long")

// readLine reads one line of at most max bytes. A longer line is consumed
// and reported as (nil, errLineTooLong).
func readLine(r *bufio.Reader, max int) ([]byte, error) {
	var buf []byte
	tooLong := false
	for {
		chunk, err := r.ReadSlice('\n')
		if !tooLong {
			if len(buf)+len(chunk) > max {
				tooLong, buf = true, nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errLineTooLong
			}
			return buf, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			if tooLong {
				return nil, errLineTooLong
			}
			return buf, err
		}
	}
}

// handle runs one message through mcp-go, turning a panic into an error
// response, and returns the encoded response (nil for notifications).
func (s *Server) handle(ctx context.Context, raw []byte, id any) (out []byte) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic handling message", "panic", r)
			if id != nil {
				out = errorResponse(id, mcp.INTERNAL_ERROR, fmt.Sprintf("internal error: %v", r))
			}
		}
	}()
	resp := s.mcp.HandleMessage(ctx, raw)
	if resp == nil {
		return nil
	}
	b, err := json.Marshal(resp)
	if err != nil {
		s.log.Error("encode response", "err", err)
		return errorResponse(id, mcp.INTERNAL_ERROR, "could not encode the response")
	}
	return b
}

func errorResponse(id any, code int, msg string) []byte {
	b, _ := json.Marshal(map[string]any{
		"jsonrpc": mcp.JSONRPC_VERSION,
		"id":      id,
		"error":   map[string]any{"code": code, "message": msg},
	})
	return b
}

// orderedWriter owns the output stream. Responses and notifications reach
// it on two queues; before it writes a response it writes every
// notification already queued, so progress never trails its result.
//
// Every write has a deadline (writeTimeout; shutdownWriteTimeout once ctx
// is done): the bytes go to out from a goroutine of their own (flush), and
// a write that fails or is not taken in time marks the writer dead and
// closes failed. Nothing more is written then, and nothing waits on the
// stuck write, so a client that stopped reading cannot hold up the
// session's end or the server's clean-up.
type orderedWriter struct {
	out       io.Writer
	responses chan reply
	notes     chan mcp.JSONRPCNotification
	failed    chan struct{}
	failOnce  sync.Once
	dead      atomic.Bool

	lines chan []byte   // to flush, one at a time
	moved chan struct{} // flush wrote a chunk
	wrote chan error    // flush's result of each line
}

// reply is a response to write; written, when set, is closed once it
// was written (or the writer gave up on it).
type reply struct {
	b       []byte
	written chan struct{}
}

func (w *orderedWriter) send(ctx context.Context, resp []byte) {
	w.sendReply(ctx, reply{b: resp})
}

// sendWritten is send, returning once the response was written, the
// writer failed or the session ends.
func (w *orderedWriter) sendWritten(ctx context.Context, resp []byte) {
	r := reply{b: resp, written: make(chan struct{})}
	if !w.sendReply(ctx, r) {
		return
	}
	select {
	case <-r.written:
	case <-w.failed:
	case <-ctx.Done():
	}
}

func (w *orderedWriter) sendReply(ctx context.Context, r reply) bool {
	select {
	case w.responses <- r:
		return true
	case <-ctx.Done():
		// Shutting down: still try to deliver (the writer drains the queue
		// before it exits) without blocking forever.
		select {
		case w.responses <- r:
			return true
		case <-time.After(time.Second):
			return false
		}
	}
}

func (w *orderedWriter) run(ctx context.Context) {
	w.lines, w.moved, w.wrote = make(chan []byte), make(chan struct{}, 1), make(chan error, 1)
	go w.flush()
	defer close(w.lines)
	for {
		select {
		case n := <-w.notes:
			w.writeNote(ctx, n)
		case r := <-w.responses:
			w.drainNotes(ctx)
			w.writeReply(ctx, r)
		case <-ctx.Done():
			// Deliver what is queued, then stop.
			for {
				select {
				case r := <-w.responses:
					w.drainNotes(ctx)
					w.writeReply(ctx, r)
				case <-time.After(200 * time.Millisecond):
					w.drainNotes(ctx)
					return
				}
			}
		}
	}
}

// flush writes each line to out, writeChunk bytes at a time, says when a
// chunk was taken, and reports how the line went. A write that blocks for
// ever leaves it blocked; the writer no longer waits for it.
func (w *orderedWriter) flush() {
	for line := range w.lines {
		var err error
		for len(line) > 0 && err == nil {
			n := min(len(line), writeChunk)
			_, err = w.out.Write(line[:n])
			line = line[n:]
			select {
			case w.moved <- struct{}{}:
			default:
			}
		}
		w.wrote <- err
	}
}

func (w *orderedWriter) drainNotes(ctx context.Context) {
	for {
		select {
		case n := <-w.notes:
			w.writeNote(ctx, n)
		default:
			return
		}
	}
}

func (w *orderedWriter) writeNote(ctx context.Context, n mcp.JSONRPCNotification) {
	b, err := json.Marshal(n)
	if err == nil {
		w.write(ctx, b)
	}
}

func (w *orderedWriter) writeReply(ctx context.Context, r reply) {
	w.write(ctx, r.b)
	if r.written != nil {
		close(r.written)
	}
}

// write writes one message and waits for it while it moves: at most
// writeTimeout without a chunk taken, and at most shutdownWriteTimeout in
// all once ctx is done. flush is idle whenever write is called: the last
// write either finished or marked the writer dead.
func (w *orderedWriter) write(ctx context.Context, b []byte) {
	if w.dead.Load() {
		return
	}
	// No copy where the message has room for its newline: a large
	// answer is not held twice.
	w.lines <- append(b, '\n')
	deadline := time.NewTimer(writeTimeout)
	defer deadline.Stop()
	ending := ctx.Done()
	for {
		select {
		case err := <-w.wrote:
			if err != nil {
				w.fail()
			}
			return
		case <-w.moved:
			if ending != nil {
				deadline.Reset(writeTimeout)
			}
		case <-ending:
			ending = nil
			deadline.Reset(shutdownWriteTimeout)
		case <-deadline.C:
			w.fail()
			return
		}
	}
}

func (w *orderedWriter) fail() {
	w.dead.Store(true)
	w.failOnce.Do(func() { close(w.failed) })
}

// session is the MCP session of one stdio connection.
type session struct {
	id            string
	notifications chan mcp.JSONRPCNotification
	initialized   atomic.Bool
	clientInfo    atomic.Value // mcp.Implementation
	clientCaps    atomic.Value // mcp.ClientCapabilities
	protocol      atomic.Value // string
	logLevel      atomic.Value // mcp.LoggingLevel
	// requests are the server's own requests to the client.
	requests outbound
}

func newSession(id string) *session {
	return &session{id: id, notifications: make(chan mcp.JSONRPCNotification, notificationBuffer)}
}

var (
	_ server.ClientSession          = (*session)(nil)
	_ server.SessionWithClientInfo  = (*session)(nil)
	_ server.SessionWithLogging     = (*session)(nil)
	_ server.SessionWithElicitation = (*session)(nil)
)

func (s *session) SessionID() string { return s.id }
func (s *session) Initialize()       { s.initialized.Store(true) }
func (s *session) Initialized() bool { return s.initialized.Load() }
func (s *session) NotificationChannel() chan<- mcp.JSONRPCNotification {
	return s.notifications
}

func (s *session) GetClientInfo() mcp.Implementation {
	v, _ := s.clientInfo.Load().(mcp.Implementation)
	return v
}
func (s *session) SetClientInfo(ci mcp.Implementation) { s.clientInfo.Store(ci) }
func (s *session) GetClientCapabilities() mcp.ClientCapabilities {
	v, _ := s.clientCaps.Load().(mcp.ClientCapabilities)
	return v
}
func (s *session) SetClientCapabilities(c mcp.ClientCapabilities) { s.clientCaps.Store(c) }
func (s *session) ProtocolVersion() string {
	v, _ := s.protocol.Load().(string)
	return v
}
func (s *session) SetProtocolVersion(v string)        { s.protocol.Store(v) }
func (s *session) SetLogLevel(level mcp.LoggingLevel) { s.logLevel.Store(level) }
func (s *session) GetLogLevel() mcp.LoggingLevel {
	if v, ok := s.logLevel.Load().(mcp.LoggingLevel); ok {
		return v
	}
	return mcp.LoggingLevelError
}
