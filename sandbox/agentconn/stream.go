package agentconn

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// MaxStreams bounds the streams open at once over one sandbox's agent:
// with agent.StreamWindow each, what a sandbox can make the server buffer
// is at most 80 × 128 KiB = 10 MiB.
const MaxStreams = 80

// maxServerStreams bounds the streams open at once over all of a server's
// agents (32 MiB of windows), so that many sandboxes cannot add up past it.
const maxServerStreams = 256

// Budget counts the streams open over all of a server's agents.
type Budget struct {
	mu     sync.Mutex
	n, max int
}

// NewBudget returns a server's budget: maxServerStreams.
func NewBudget() *Budget { return &Budget{max: maxServerStreams} }

// take reserves a stream, or reports that none is free; a nil budget
// (tests) has room for any.
func (b *Budget) take() bool {
	if b == nil {
		return true
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n >= b.max {
		return false
	}
	b.n++
	return true
}

func (b *Budget) give() {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.n--
	b.mu.Unlock()
}

// streamWriteTimeout bounds one frame's write to the agent: an agent that
// takes in nothing for this long has been stopped from inside the
// sandbox, and its connection ends.
const streamWriteTimeout = 30 * time.Second

// streamStallLimit bounds how long a stream may stand still with its
// window full: a reader on the server that takes none of the bytes
// waiting, or a program in the sandbox that gives no credit for what the
// server wants to send, has its stream reset after it, so that it holds
// no stream (of MaxStreams) for ever.
const streamStallLimit = 60 * time.Second

// stallNanos, when set, replaces streamStallLimit (a test's shorter one).
var stallNanos atomic.Int64

// SetStallLimit sets how long a stream may stand still with its window
// full (streamStallLimit; 0 restores it) and returns a function that
// restores the one before: a test of the cut need not wait a minute.
func SetStallLimit(d time.Duration) (restore func()) {
	old := stallNanos.Swap(int64(d))
	return func() { stallNanos.Store(old) }
}

// StallLimit is the stall limit in force: the most a stream may stand
// still with its window full (a preview gives its host reader as long).
func StallLimit() time.Duration {
	if d := stallNanos.Load(); d > 0 {
		return time.Duration(d)
	}
	return streamStallLimit
}

// Stream errors.
var (
	// ErrNothingListens: a dial found nothing listening on its port.
	ErrNothingListens = errors.New("nothing listens on the port")
	// ErrNoStreams: the agent running in the sandbox carries no streams.
	ErrNoStreams = errors.New("the sandbox's command agent carries no connections")
	// ErrTooManyStreams: MaxStreams are open.
	ErrTooManyStreams = fmt.Errorf("too many connections into the sandbox at once (at most %d)", MaxStreams)
	// ErrTooManyServerStreams: maxServerStreams are open over all agents.
	ErrTooManyServerStreams = fmt.Errorf("too many connections into sandboxes at once (at most %d for the server)", maxServerStreams)
	// errStreamReset: the sandbox's end abandoned the stream.
	errStreamReset = errors.New("the connection inside the sandbox was reset")
	// errStreamStalled: the server's reader took nothing for streamStallLimit.
	errStreamStalled = fmt.Errorf("the connection into the sandbox was cut: its reader took none of the bytes waiting for %s; read the response as it comes", streamStallLimit)
	// errStreamNotRead: the program inside gave no credit for streamStallLimit.
	errStreamNotRead = fmt.Errorf("the connection into the sandbox was cut: the program inside read nothing for %s; have it read what it is sent", streamStallLimit)
)

// streamMux is an agent connection's streams (package proto's), each an
// Stream. Everything the agent says about them is hostile: a frame
// about a stream id the server never opened ends the connection; one that
// breaks a stream's rules (data beyond the credit given, after its eof or
// before it was dialed, credit beyond the window) resets that stream.
type streamMux struct {
	mu      sync.Mutex
	ok      bool // the agent announced streams
	last    int  // the last id the server opened (odd; 0 before the first)
	streams map[int]*Stream

	lastAgent    int // the last stream id an accept opened (even)
	lastListener int
	listeners    map[int]*listener
	budget       *Budget // the server's, shared by its agents
	window       int     // the credit the agent gives (agentWindow)
}

// agentWindow is the credit the server starts each stream with, from the
// window an agent's ready frame announced: at most agent.AgentWindow (what
// the agent buffers, in the sandbox), and agent.StreamWindow for an agent
// that announced none, or one out of bounds.
func agentWindow(announced int) int {
	if announced < agent.StreamChunk || announced > agent.AgentWindow {
		return agent.StreamWindow
	}
	return announced
}

// Stream is one TCP connection inside the sandbox, reached through the
// agent: a net.Conn, with CloseWrite. The agent never has more than
// agent.StreamWindow bytes of it unread by the server's reader, so a
// stream nobody reads holds at most that much, and holds up nothing else.
type Stream struct {
	c    *Conn
	id   int
	port int

	wmu   sync.Mutex // one Write at a time
	frame []byte     // Write's data frame, reused (wmu held)

	mu      sync.Mutex
	sig     chan struct{} // closed and replaced on every change
	dialed  chan string   // the Dialed answer's error ("" for none)
	pending bool          // dial not answered yet
	buf     []byte        // received, unread: buf[r:]
	r       int
	avail   int  // bytes the agent may still send
	owed    int  // bytes read but not yet given back as credit
	window  int  // the most the server may send beyond the agent's credit
	credit  int  // bytes the server may still send
	rEOF    bool // the agent sends no more
	wEOF    bool // the server sends no more
	err     error
	closed  bool
	rdl     time.Time
	wdl     time.Time

	stall    *time.Timer // running while the agent has no credit (avail 0)
	fullAt   time.Time   // when avail last fell to 0
	lastRead time.Time   // when Read last took bytes
}

// dial opens a stream to port on the sandbox's loopback.
func (c *Conn) dial(ctx context.Context, port int) (*Stream, error) {
	return c.Dial(ctx, port, 0)
}

// Dial opens a stream to port on the sandbox's loopback (a net.Conn with
// CloseWrite), refusing at once, never waiting, while fewer than room+1
// of MaxStreams are free: a preview leaves room for the sandbox's proxy.
func (c *Conn) Dial(ctx context.Context, port, room int) (*Stream, error) {
	m := &c.mux
	m.mu.Lock()
	if !m.ok {
		m.mu.Unlock()
		return nil, ErrNoStreams
	}
	if len(m.streams) >= MaxStreams-room {
		m.mu.Unlock()
		if room > 0 {
			return nil, fmt.Errorf("%w; %d of them are kept for the sandbox's proxy: close some connections to the preview", ErrTooManyStreams, room)
		}
		return nil, ErrTooManyStreams
	}
	if !m.budget.take() {
		m.mu.Unlock()
		return nil, ErrTooManyServerStreams
	}
	if m.last == 0 {
		m.last = 1
	} else {
		m.last += 2
	}
	s := &Stream{
		c: c, id: m.last, port: port, sig: make(chan struct{}), dialed: make(chan string, 1),
		pending: true, avail: agent.StreamWindow, window: m.window, credit: m.window,
	}
	m.streams[s.id] = s
	m.mu.Unlock()
	if err := c.send(ctx, agent.KindDial, agent.Dial{ID: s.id, Port: port}); err != nil {
		s.Close()
		return nil, diedOr(err)
	}
	select {
	case msg := <-s.dialed:
		if msg != "" {
			s.drop()
			err := fmt.Errorf("connect to port %d inside the sandbox: %s", port, clipString(msg, 256))
			if strings.Contains(msg, "connection refused") {
				err = fmt.Errorf("%w: %w", ErrNothingListens, err)
			}
			return nil, err
		}
		return s, nil
	case <-c.dead:
		s.drop()
		return nil, c.died()
	case <-ctx.Done():
		s.Close()
		return nil, ctx.Err()
	}
}

// onStream handles a stream frame from the decoder's goroutine: it never
// blocks (what it must send goes from a goroutine of its own).
func (c *Conn) onStream(f runner.Frame) {
	id, body, err := streamFrame(f)
	if err != nil {
		c.fail(fmt.Errorf("%w: %v", runner.ErrProtocol, err))
		return
	}
	switch f.Kind {
	case agent.KindListening:
		c.onListening(id, body)
		return
	case agent.KindAccept:
		c.onAccept(id, body)
		return
	}
	m := &c.mux
	m.mu.Lock()
	s := m.streams[id]
	known := m.ok && id > 0 && (id%2 == 1 && id <= m.last || id%2 == 0 && id <= m.lastAgent)
	m.mu.Unlock()
	switch {
	case !known:
		c.fail(fmt.Errorf("%w: a %s frame for stream %d, which the server never opened", runner.ErrProtocol, f.Kind, id))
		return
	case s == nil:
		// A stream already closed or reset: frames in flight are dropped;
		// a late dial answer is told the stream is gone.
		if f.Kind == agent.KindDialed {
			go c.sendReset(id)
		}
		return
	}
	if why := s.take(f.Kind, body); why != "" {
		s.broken(why)
	}
}

// streamFrame parses a stream frame: its stream's id and what it carries.
func streamFrame(f runner.Frame) (int, streamBody, error) {
	if f.Kind == agent.KindData {
		i := -1
		for j, b := range f.Payload {
			if b == '\n' {
				i = j
				break
			}
		}
		if i < 1 || i > 10 {
			return 0, streamBody{}, errors.New("a data frame without a stream id")
		}
		id, err := strconv.Atoi(string(f.Payload[:i]))
		if err != nil {
			return 0, streamBody{}, errors.New("a data frame without a stream id")
		}
		return id, streamBody{data: f.Payload[i+1:]}, nil
	}
	var m struct {
		ID       int    `json:"id"`
		N        int    `json:"n"`
		Err      string `json:"err"`
		Port     int    `json:"port"`
		Listener int    `json:"listener"`
	}
	if err := json.Unmarshal(f.Payload, &m); err != nil {
		return 0, streamBody{}, fmt.Errorf("bad %s frame: %v", f.Kind, err)
	}
	return m.ID, streamBody{n: m.N, err: m.Err, port: m.Port, listener: m.Listener}, nil
}

// streamBody is what a stream frame carries beyond its id.
type streamBody struct {
	data     []byte
	n        int
	err      string
	port     int
	listener int
}

// take applies a frame to s; it returns why s breaks the rules, if it does.
func (s *Stream) take(kind string, b streamBody) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return "" // reset already; frames in flight are dropped
	}
	switch kind {
	case agent.KindDialed:
		if !s.pending {
			return "a second dial answer"
		}
		s.pending = false
		s.dialed <- b.err
	case agent.KindData:
		switch {
		case s.pending:
			return "data before the dial was answered"
		case s.rEOF:
			return "data after its end"
		case len(b.data) > s.avail:
			return "more data than the credit given"
		}
		s.push(b.data)
		s.avail -= len(b.data)
		if s.avail == 0 {
			s.fullAt = time.Now()
			if s.stall == nil {
				s.stall = time.AfterFunc(StallLimit(), s.checkStall)
			}
		}
	case agent.KindCredit:
		if b.n <= 0 || b.n > s.window-s.credit {
			return "credit beyond the window"
		}
		s.credit += b.n
	case agent.KindEOF:
		if s.pending || s.rEOF {
			return "an unexpected end"
		}
		s.rEOF = true
	case agent.KindReset:
		s.err = errStreamReset
		s.buf, s.r = nil, 0
		if s.pending {
			s.pending = false
			s.dialed <- "the agent refused the connection"
		}
		s.c.mux.forget(s)
	}
	s.wake()
	return ""
}

// push appends received bytes, never holding more than the window.
func (s *Stream) push(p []byte) {
	if s.r > 0 && len(s.buf)+len(p) > cap(s.buf) {
		n := copy(s.buf, s.buf[s.r:])
		s.buf, s.r = s.buf[:n], 0
	}
	if len(s.buf)+len(p) > cap(s.buf) {
		need := len(s.buf) + len(p) // at most the window: take checked the credit
		nb := make([]byte, len(s.buf), max(need, min(agent.StreamWindow, max(2*cap(s.buf), 4096))))
		copy(nb, s.buf)
		s.buf = nb
	}
	s.buf = append(s.buf, p...)
}

// wake tells waiters something changed (s.mu held).
func (s *Stream) wake() {
	close(s.sig)
	s.sig = make(chan struct{})
}

// broken resets s: the agent broke its rules.
func (s *Stream) broken(why string) {
	s.cut(fmt.Errorf("%w: stream %d: %s", runner.ErrProtocol, s.id, why), why)
}

// cut resets s with err (the dial, if still waiting, fails with why) and
// tells the agent.
func (s *Stream) cut(err error, why string) {
	s.mu.Lock()
	if s.err == nil {
		s.err = err
		s.buf, s.r = nil, 0
		if s.pending {
			s.pending = false
			s.dialed <- why
		}
		s.wake()
	}
	s.mu.Unlock()
	s.c.mux.forget(s)
	go s.c.sendReset(s.id)
}

// checkStall runs streamStallLimit after the agent ran out of credit: it
// cuts s if nothing has been read since, else waits the rest of the limit
// from the last read.
func (s *Stream) checkStall() {
	s.mu.Lock()
	if s.avail > 0 || s.err != nil || s.closed {
		s.stall = nil
		s.mu.Unlock()
		return
	}
	since := s.fullAt
	if s.lastRead.After(since) {
		since = s.lastRead
	}
	if left := StallLimit() - time.Since(since); left > 0 {
		s.stall.Reset(left)
		s.mu.Unlock()
		return
	}
	s.stall = nil
	s.mu.Unlock()
	s.cut(errStreamStalled, "stalled")
}

func (m *streamMux) forget(s *Stream) {
	m.mu.Lock()
	held := m.streams[s.id] == s
	if held {
		delete(m.streams, s.id)
	}
	m.mu.Unlock()
	if held {
		m.budget.give()
	}
}

// drop forgets a stream whose dial failed (the agent holds nothing of it).
func (s *Stream) drop() {
	s.mu.Lock()
	s.closed = true
	if s.err == nil {
		s.err = net.ErrClosed
	}
	s.wake()
	s.mu.Unlock()
	s.c.mux.forget(s)
}

func (c *Conn) sendReset(id int) {
	ctx, cancel := context.WithTimeout(context.Background(), streamWriteTimeout)
	defer cancel()
	_ = c.send(ctx, agent.KindReset, agent.StreamID{ID: id})
}

// wait waits for a change of s after ch was taken, until dl (if set).
func (s *Stream) wait(ch <-chan struct{}, dl time.Time) {
	var tc <-chan time.Time
	if !dl.IsZero() {
		t := time.NewTimer(time.Until(dl))
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ch:
	case <-tc:
	case <-s.c.dead:
	}
}

// state returns why s can no longer be used (s.mu held), or nil.
func (s *Stream) state() error {
	switch {
	case s.closed:
		return net.ErrClosed
	case s.err != nil:
		return s.err
	case s.c.Gone():
		return s.c.died()
	}
	return nil
}

// Read reads what the program in the sandbox sent, and gives the agent
// credit for it.
func (s *Stream) Read(p []byte) (int, error) {
	for {
		s.mu.Lock()
		if n := copy(p, s.buf[s.r:]); n > 0 && !s.closed {
			s.r += n
			s.lastRead = time.Now()
			if s.r == len(s.buf) {
				s.buf, s.r = s.buf[:0], 0
			}
			s.owed += n
			grant := 0
			if s.owed >= agent.StreamWindow/4 || len(s.buf) == 0 {
				grant, s.owed = s.owed, 0
				s.avail += grant
				if s.stall != nil {
					s.stall.Stop()
					s.stall = nil
				}
			}
			s.mu.Unlock()
			if grant > 0 && !s.rEOFNow() {
				_ = s.send(agent.KindCredit, agent.Credit{ID: s.id, N: grant})
			}
			return n, nil
		}
		if err := s.state(); err != nil {
			s.mu.Unlock()
			return 0, err
		}
		if s.rEOF {
			s.mu.Unlock()
			return 0, io.EOF
		}
		if !s.rdl.IsZero() && !time.Now().Before(s.rdl) {
			s.mu.Unlock()
			return 0, os.ErrDeadlineExceeded
		}
		ch, dl := s.sig, s.rdl
		s.mu.Unlock()
		s.wait(ch, dl)
	}
}

func (s *Stream) rEOFNow() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.rEOF
}

// Write sends p to the program in the sandbox, as the credit allows.
func (s *Stream) Write(p []byte) (int, error) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	done := 0
	var starved time.Time // since when the agent has given no credit
	for done < len(p) {
		s.mu.Lock()
		err := s.state()
		if err == nil && s.wEOF {
			err = errors.New("write after CloseWrite")
		}
		if err == nil && !s.wdl.IsZero() && !time.Now().Before(s.wdl) {
			err = os.ErrDeadlineExceeded
		}
		if err != nil {
			s.mu.Unlock()
			return done, err
		}
		if s.credit == 0 {
			if starved.IsZero() {
				starved = time.Now()
			}
			ch, dl, wdl := s.sig, starved.Add(StallLimit()), s.wdl
			s.mu.Unlock()
			if !time.Now().Before(dl) {
				s.cut(errStreamNotRead, "stalled")
				return done, errStreamNotRead
			}
			if !wdl.IsZero() && wdl.Before(dl) {
				dl = wdl
			}
			s.wait(ch, dl)
			continue
		}
		starved = time.Time{}
		n := min(s.credit, agent.StreamChunk, len(p)-done)
		s.credit -= n
		s.mu.Unlock()
		if err := s.writeData(p[done : done+n]); err != nil {
			return done, err
		}
		done += n
	}
	return done, nil
}

// writeData writes one data frame of p, built in a buffer the stream
// reuses (s.wmu held): a frame is written whole or the connection is cut
// (write), so the buffer is never read again once write has returned.
func (s *Stream) writeData(p []byte) error {
	var id [20]byte
	prefix := append(strconv.AppendInt(id[:0], int64(s.id), 10), '\n')
	f := append(s.frame[:0], s.c.nonce...)
	f = append(f, " "+agent.KindData+" "...)
	f = strconv.AppendInt(f, int64(len(prefix)+len(p)), 10)
	f = append(f, '\n')
	f = append(f, prefix...)
	s.frame = append(f, p...)
	ctx, cancel := context.WithTimeout(context.Background(), streamWriteTimeout)
	defer cancel()
	return s.c.write(ctx, s.frame)
}

func (s *Stream) send(kind string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.writeFrame(kind, b)
}

func (s *Stream) writeFrame(kind string, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), streamWriteTimeout)
	defer cancel()
	return s.c.write(ctx, runner.AppendFrame(nil, s.c.nonce, kind, body))
}

// CloseWrite tells the program in the sandbox no more is coming.
func (s *Stream) CloseWrite() error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	err := s.state()
	already := s.wEOF
	s.wEOF = true
	s.mu.Unlock()
	if err != nil || already {
		return err
	}
	return s.send(agent.KindEOF, agent.StreamID{ID: s.id})
}

// Close frees the stream's buffer and ends it, as closing a TCP socket
// does: when the program inside had finished sending, what was written is
// delivered and its connection half-closed (eof); when it had not, the
// stream is abandoned (reset: its connection is closed at once).
func (s *Stream) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	kind := ""
	switch {
	case s.err != nil:
	case !s.rEOF:
		kind = agent.KindReset
	case !s.wEOF:
		kind = agent.KindEOF
	}
	s.buf, s.r = nil, 0
	s.wake()
	s.mu.Unlock()
	s.c.mux.forget(s)
	if kind != "" && !s.c.Gone() {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), streamWriteTimeout)
			defer cancel()
			_ = s.c.send(ctx, kind, agent.StreamID{ID: s.id})
		}()
	}
	return nil
}

// LocalAddr, RemoteAddr and the deadlines make a stream a net.Conn.
func (s *Stream) LocalAddr() net.Addr { return streamAddr("agent") }

func (s *Stream) RemoteAddr() net.Addr {
	return streamAddr("sandbox loopback:" + strconv.Itoa(s.port))
}

func (s *Stream) SetDeadline(t time.Time) error {
	s.mu.Lock()
	s.rdl, s.wdl = t, t
	s.wake()
	s.mu.Unlock()
	return nil
}

func (s *Stream) SetReadDeadline(t time.Time) error {
	s.mu.Lock()
	s.rdl = t
	s.wake()
	s.mu.Unlock()
	return nil
}

func (s *Stream) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	s.wdl = t
	s.wake()
	s.mu.Unlock()
	return nil
}

type streamAddr string

func (a streamAddr) Network() string { return "agent" }
func (a streamAddr) String() string  { return string(a) }

// Streams reports whether the agent carries streams (it said so when it
// started): without them Dial and Listen fail with ErrNoStreams.
func (c *Conn) Streams() bool {
	c.mux.mu.Lock()
	defer c.mux.mu.Unlock()
	return c.mux.ok
}
