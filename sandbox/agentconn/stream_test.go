package agentconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// pipeProc is an attached process whose stdin is one end of a pipe.
type pipeProc struct {
	w    io.WriteCloser
	once sync.Once
	done chan struct{}
}

func (p *pipeProc) Write(b []byte) (int, error) { return p.w.Write(b) }
func (p *pipeProc) Done() <-chan struct{}       { return p.done }
func (p *pipeProc) PID(context.Context) int     { return 0 }
func (p *pipeProc) Wait(context.Context) (backend.ExecStatus, error) {
	<-p.done
	return backend.ExecStatus{}, nil
}
func (p *pipeProc) Kill(context.Context) error { return p.Close() }
func (p *pipeProc) Close() error {
	p.once.Do(func() { close(p.done); p.w.Close() })
	return nil
}

// fakeAgent is the agent's end of a test connection: it records what the
// server sends and speaks frames of its own choosing.
type fakeAgent struct {
	t    *testing.T
	c    *Conn
	dec  *runner.Decoder // the server's decoder of what the agent says
	smu  sync.Mutex      // one writer of dec at a time, as the backend's
	mu   sync.Mutex
	got  []runner.Frame
	more chan struct{}
}

const testNonce = "0123456789abcdef0123456789abcdef"

// newTestConn connects an Conn (streams on) to a fake agent of
// protocol version 2 (no window announced).
func newTestConn(t *testing.T) *fakeAgent {
	t.Helper()
	return newTestConnReady(t, `{"pid":1,"version":"2","streams":true}`)
}

// newTestConnReady is newTestConn with the agent's ready payload.
func newTestConnReady(t *testing.T, ready string) *fakeAgent {
	t.Helper()
	srv, ag := net.Pipe()
	c := newConn(testNonce, nil)
	c.proc = &pipeProc{w: srv, done: make(chan struct{})}
	f := &fakeAgent{t: t, c: c, dec: c.decoder(), more: make(chan struct{}, 1)}
	t.Cleanup(func() { c.fail(errors.New("test over")); c.proc.Close(); ag.Close() })
	go func() {
		in := runner.NewDecoder(testNonce, func(fr runner.Frame) {
			fr.Payload = bytes.Clone(fr.Payload)
			f.mu.Lock()
			f.got = append(f.got, fr)
			f.mu.Unlock()
			select {
			case f.more <- struct{}{}:
			default:
			}
		}, nil).Limit(64<<20, agent.KindDial, agent.KindData, agent.KindCredit, agent.KindEOF, agent.KindReset, agent.KindStart, agent.KindListen, agent.KindUnlisten, agent.KindFile)
		_, _ = io.Copy(in, ag)
	}()
	f.say(runner.KindReady, ready)
	return f
}

// say sends a frame from the agent to the server.
func (f *fakeAgent) say(kind, payload string) {
	f.smu.Lock()
	defer f.smu.Unlock()
	_, _ = f.dec.Write(runner.AppendFrame(nil, testNonce, kind, []byte(payload)))
}

func (f *fakeAgent) sayJSON(kind string, v any) {
	b, _ := json.Marshal(v)
	f.say(kind, string(b))
}

// next waits for the server's next frame of kind (others are kept).
func (f *fakeAgent) next(kind string) runner.Frame {
	f.t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		f.mu.Lock()
		for i, fr := range f.got {
			if fr.Kind == kind {
				f.got = append(f.got[:i], f.got[i+1:]...)
				f.mu.Unlock()
				return fr
			}
		}
		f.mu.Unlock()
		select {
		case <-f.more:
		case <-deadline:
			f.t.Fatalf("no %s frame from the server", kind)
		}
	}
}

// dial opens a stream, answering the server's dial as an agent would.
func (f *fakeAgent) dial(port int) *Stream {
	f.t.Helper()
	type result struct {
		s   *Stream
		err error
	}
	ch := make(chan result, 1)
	go func() {
		s, err := f.c.dial(context.Background(), port)
		ch <- result{s, err}
	}()
	var d agent.Dial
	if err := json.Unmarshal(f.next(agent.KindDial).Payload, &d); err != nil || d.Port != port {
		f.t.Fatalf("dial frame: %+v %v", d, err)
	}
	f.sayJSON(agent.KindDialed, agent.Dialed{ID: d.ID})
	r := <-ch
	if r.err != nil {
		f.t.Fatal(r.err)
	}
	return r.s
}

func data(id int, b []byte) string { return strconv.Itoa(id) + "\n" + string(b) }

// Both ways, a stream carries bytes in order and never sends beyond the
// credit the other end gave.
func TestStreamCarriesBytesWithinCredit(t *testing.T) {
	f := newTestConn(t)
	s := f.dial(8000)
	if s.id != 1 {
		t.Errorf("first stream id %d, want 1", s.id)
	}
	msg := bytes.Repeat([]byte("0123456789abcdef"), 3*agent.StreamWindow/16) // three windows
	wrote := make(chan error, 1)
	go func() { _, err := s.Write(msg); wrote <- err }()
	var got []byte
	for len(got) < agent.StreamWindow {
		fr := f.next(agent.KindData)
		if len(fr.Payload)-2 > agent.StreamChunk {
			t.Fatalf("a data frame of %d bytes", len(fr.Payload)-2)
		}
		got = append(got, fr.Payload[2:]...)
	}
	select {
	case err := <-wrote:
		t.Fatalf("the write ended (%v) without credit beyond the window", err)
	case <-time.After(100 * time.Millisecond):
	}
	if len(got) != agent.StreamWindow {
		t.Fatalf("%d bytes sent on a window of %d", len(got), agent.StreamWindow)
	}
	for len(got) < len(msg) {
		f.sayJSON(agent.KindCredit, agent.Credit{ID: s.id, N: agent.StreamWindow})
		for n := 0; n < agent.StreamWindow; {
			fr := f.next(agent.KindData)
			n += len(fr.Payload) - 2
			got = append(got, fr.Payload[2:]...)
		}
	}
	if err := <-wrote; err != nil || !bytes.Equal(got, msg) {
		t.Fatalf("write: %v, %d bytes arrived intact: %v", err, len(got), bytes.Equal(got, msg))
	}
	// The other way: a window's worth is buffered, read, and credited.
	f.say(agent.KindData, data(s.id, bytes.Repeat([]byte("x"), agent.StreamChunk)))
	f.say(agent.KindData, data(s.id, []byte("yz")))
	all := make([]byte, agent.StreamChunk+2)
	if _, err := io.ReadFull(s, all); err != nil || string(all[len(all)-2:]) != "yz" {
		t.Fatalf("read %d bytes, %v", len(all), err)
	}
	var cr agent.Credit
	_ = json.Unmarshal(f.next(agent.KindCredit).Payload, &cr)
	if cr.ID != s.id || cr.N != agent.StreamChunk+2 {
		t.Errorf("credit %+v, want all that was read", cr)
	}
	f.sayJSON(agent.KindEOF, agent.StreamID{ID: s.id})
	if n, err := s.Read(all); n != 0 || err != io.EOF {
		t.Errorf("read after eof: %d %v", n, err)
	}
	_ = s.CloseWrite()
	f.next(agent.KindEOF)
	s.Close()
	if n := f.c.mux.count(); n != 0 {
		t.Errorf("%d streams left", n)
	}
}

// The server sends a stream as far as the window its agent announced
// allows (version 3), within agent.AgentWindow; an agent that announced
// none, or one out of bounds, gets agent.StreamWindow. Credit beyond the
// window in use resets the stream.
func TestStreamAgentWindow(t *testing.T) {
	for _, tc := range []struct {
		name, ready string
		want        int
	}{
		{"version 2", `{"pid":1,"version":"2","streams":true}`, agent.StreamWindow},
		{"version 3", `{"pid":1,"version":"3","streams":true,"window":1048576}`, agent.AgentWindow},
		{"a smaller window", `{"pid":1,"version":"3","streams":true,"window":262144}`, 256 << 10},
		{"beyond AgentWindow", `{"pid":1,"version":"3","streams":true,"window":1073741824}`, agent.StreamWindow},
		{"below a chunk", `{"pid":1,"version":"3","streams":true,"window":1}`, agent.StreamWindow},
		{"negative", `{"pid":1,"version":"3","streams":true,"window":-1}`, agent.StreamWindow},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestConnReady(t, tc.ready)
			s := f.dial(8000)
			go func() { _, _ = s.Write(make([]byte, 2*agent.AgentWindow)) }()
			sent := 0
			for sent < tc.want {
				sent += len(f.next(agent.KindData).Payload) - 2
			}
			// The writer has used its credit: nothing more comes until
			// the agent gives some (polled: a frame would be in f.got).
			time.Sleep(50 * time.Millisecond)
			f.mu.Lock()
			for _, fr := range f.got {
				if fr.Kind == agent.KindData {
					sent += len(fr.Payload) - 2
				}
			}
			f.mu.Unlock()
			if sent != tc.want {
				t.Fatalf("%d bytes sent before any credit, want the window %d", sent, tc.want)
			}
			// The whole window back is allowed, a byte more is not.
			f.sayJSON(agent.KindCredit, agent.Credit{ID: s.id, N: tc.want + 1})
			f.next(agent.KindReset)
		})
	}
}

// What a hostile agent says about a stream resets that stream, or, about
// one the server never opened, ends the connection; never more.
func TestStreamHostileFrames(t *testing.T) {
	big := strings.Repeat("x", agent.StreamChunk)
	cases := []struct {
		name string
		say  func(f *fakeAgent, s *Stream)
		// endsConn: the connection ends; else only the stream is reset.
		endsConn bool
	}{
		{"data beyond the credit", func(f *fakeAgent, s *Stream) {
			for range agent.StreamWindow/agent.StreamChunk + 1 {
				f.say(agent.KindData, data(s.id, []byte(big)))
			}
		}, false},
		{"data after its eof", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindEOF, agent.StreamID{ID: s.id})
			f.say(agent.KindData, data(s.id, []byte("late")))
		}, false},
		{"a second eof", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindEOF, agent.StreamID{ID: s.id})
			f.sayJSON(agent.KindEOF, agent.StreamID{ID: s.id})
		}, false},
		{"credit beyond the window", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindCredit, agent.Credit{ID: s.id, N: 1})
		}, false},
		{"negative credit", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindCredit, agent.Credit{ID: s.id, N: -5})
		}, false},
		{"a second dial answer", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindDialed, agent.Dialed{ID: s.id})
		}, false},
		{"data for a stream never opened", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindData, data(s.id+4, []byte("x")))
		}, true},
		{"data for an even id", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindData, data(2, []byte("x")))
		}, true},
		{"credit for id 0", func(f *fakeAgent, s *Stream) {
			f.sayJSON(agent.KindCredit, agent.Credit{ID: 0, N: 1})
		}, true},
		{"a data frame without an id", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindData, "no id here")
		}, true},
		{"an id in data of huge digits", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindData, "99999999999999999999999\nx")
		}, true},
		{"a malformed credit", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindCredit, `{"id":`)
		}, true},
		{"a frame over the limit", func(f *fakeAgent, s *Stream) {
			f.say(agent.KindData, data(s.id, bytes.Repeat([]byte("x"), agent.MaxFrame)))
		}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestConn(t)
			s := f.dial(8000)
			other := f.dial(8001)
			tc.say(f, s)
			if tc.endsConn {
				if !f.c.Gone() {
					t.Fatal("the connection did not end")
				}
				if _, err := s.Read(make([]byte, 1)); !errors.Is(err, ErrDied) {
					t.Errorf("read after the connection ended: %v", err)
				}
				// What is sent after it says why it ended (a preview's
				// request written after the frame that ended it).
				why := f.c.deadErr.Error()
				if _, err := s.Write([]byte("GET /")); !errors.Is(err, ErrDied) || !strings.Contains(err.Error(), why) {
					t.Errorf("write after the connection ended: %v; want why (%s)", err, why)
				}
				if err := f.c.send(context.Background(), agent.KindUnlisten, agent.StreamID{ID: 1}); !errors.Is(err, ErrDied) || !strings.Contains(err.Error(), why) {
					t.Errorf("a frame sent after the connection ended: %v; want why (%s)", err, why)
				}
				return
			}
			if f.c.Gone() {
				t.Fatalf("the connection ended (%v); only the stream should have", f.c.deadErr)
			}
			_ = s.SetReadDeadline(time.Now().Add(5 * time.Second)) // fail, not hang
			_, err := io.ReadAll(s)
			if !errors.Is(err, runner.ErrProtocol) {
				t.Errorf("read of the broken stream: %v", err)
			}
			var r agent.StreamID
			_ = json.Unmarshal(f.next(agent.KindReset).Payload, &r)
			if r.ID != s.id {
				t.Errorf("reset %+v, want stream %d", r, s.id)
			}
			// Frames still in flight for it are dropped; the other stream
			// and the connection go on.
			f.say(agent.KindData, data(s.id, []byte("in flight")))
			f.say(agent.KindData, data(other.id, []byte("fine")))
			buf := make([]byte, 4)
			if _, err := io.ReadFull(other, buf); err != nil || string(buf) != "fine" || f.c.Gone() {
				t.Errorf("the other stream: %q %v (connection gone: %v)", buf, err, f.c.Gone())
			}
		})
	}
}

// The streams open at once are capped; a refused dial frees its place;
// the connection's end wakes every stream's reader and writer.
func TestStreamCapAndEnd(t *testing.T) {
	f := newTestConn(t)
	var open []*Stream
	for range MaxStreams {
		open = append(open, f.dial(9000))
	}
	if _, err := f.c.dial(context.Background(), 9000); !errors.Is(err, ErrTooManyStreams) {
		t.Fatalf("dial beyond the cap: %v", err)
	}
	open[0].Close()
	f.next(agent.KindReset)
	go func() {
		var d agent.Dial
		_ = json.Unmarshal(f.next(agent.KindDial).Payload, &d)
		f.sayJSON(agent.KindDialed, agent.Dialed{ID: d.ID, Err: "connection refused"})
	}()
	if _, err := f.c.dial(context.Background(), 9000); err == nil || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("refused dial: %v", err)
	}
	if n := f.c.mux.count(); n != MaxStreams-1 {
		t.Errorf("%d streams open, want %d", n, MaxStreams-1)
	}
	// A stream nobody reads holds its window and no more, and holds up
	// nothing else: here its writer waits for credit while the
	// connection ends.
	s := open[1]
	f.say(agent.KindData, data(s.id, bytes.Repeat([]byte("y"), agent.StreamChunk)))
	errs := make(chan error, 2)
	go func() { _, err := s.Write(make([]byte, 2*agent.StreamWindow)); errs <- err }()
	go func() { _, err := io.ReadAll(open[2]); errs <- err }()
	f.c.fail(errors.New("agent gone"))
	for range 2 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrDied) {
				t.Errorf("after the connection ended: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a stream stayed blocked after the connection ended")
		}
	}
}

// Deadlines end a Read or Write that waits.
func TestStreamDeadlines(t *testing.T) {
	f := newTestConn(t)
	s := f.dial(8000)
	_ = s.SetReadDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := s.Read(make([]byte, 1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("read past its deadline: %v", err)
	}
	_ = s.SetWriteDeadline(time.Now().Add(50 * time.Millisecond))
	if _, err := s.Write(make([]byte, agent.StreamWindow+1)); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Errorf("write past its deadline: %v", err)
	}
}

// An agent that did not announce streams is never sent their frames.
func TestStreamsNeedTheirAnnouncement(t *testing.T) {
	c := &Conn{mux: streamMux{streams: map[int]*Stream{}}, dead: make(chan struct{})}
	if _, err := c.dial(context.Background(), 80); !errors.Is(err, ErrNoStreams) {
		t.Errorf("dial through an old agent: %v", err)
	}
}

func (m *streamMux) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.streams)
}

// listen has the server ask for a listener, answered as an agent would;
// accepted streams go to the channel.
func (f *fakeAgent) listen() (int, chan net.Conn) {
	f.t.Helper()
	conns := make(chan net.Conn, MaxStreams+8)
	type result struct {
		id  int
		err error
	}
	ch := make(chan result, 1)
	go func() {
		id, _, err := f.c.Listen(context.Background(), 0, func(c net.Conn) { conns <- c })
		ch <- result{id, err}
	}()
	var l agent.Listen
	_ = json.Unmarshal(f.next(agent.KindListen).Payload, &l)
	f.sayJSON(agent.KindListening, agent.Listening{ID: l.ID, Port: 4242})
	r := <-ch
	if r.err != nil || r.id != l.ID {
		f.t.Fatalf("listen: %+v", r)
	}
	return r.id, conns
}

// Connections the agent accepts become streams; what a hostile agent says
// about listeners ends the connection or resets the one stream.
func TestStreamListen(t *testing.T) {
	f := newTestConn(t)
	lid, conns := f.listen()
	f.sayJSON(agent.KindAccept, agent.Accept{ID: 2, Listener: lid})
	c := <-conns
	f.say(agent.KindData, data(2, []byte("from inside")))
	f.sayJSON(agent.KindEOF, agent.StreamID{ID: 2})
	if b, err := io.ReadAll(c); err != nil || string(b) != "from inside" {
		t.Fatalf("accepted stream: %q %v", b, err)
	}
	if _, err := c.Write([]byte("answer")); err != nil {
		t.Fatal(err)
	}
	if fr := f.next(agent.KindData); string(fr.Payload) != "2\nanswer" {
		t.Errorf("data %q", fr.Payload)
	}
	c.Close() // the program had finished: a graceful end
	if fr := f.next(agent.KindEOF); !strings.Contains(string(fr.Payload), `"id":2`) {
		t.Errorf("eof %q", fr.Payload)
	}
	// A listener closed, then a connection for it: reset, nothing else.
	f.c.Unlisten(lid)
	f.next(agent.KindUnlisten)
	f.sayJSON(agent.KindAccept, agent.Accept{ID: 4, Listener: lid})
	if fr := f.next(agent.KindReset); !strings.Contains(string(fr.Payload), `"id":4`) || f.c.Gone() {
		t.Errorf("accept for a closed listener: %q (gone %v)", fr.Payload, f.c.Gone())
	}

	for _, tc := range []struct {
		name string
		say  func(f *fakeAgent, lid int)
	}{
		{"an odd stream id", func(f *fakeAgent, lid int) { f.sayJSON(agent.KindAccept, agent.Accept{ID: 3, Listener: lid}) }},
		{"an id not increasing", func(f *fakeAgent, lid int) {
			f.sayJSON(agent.KindAccept, agent.Accept{ID: 4, Listener: lid})
			f.sayJSON(agent.KindAccept, agent.Accept{ID: 4, Listener: lid})
		}},
		{"a listener never asked for", func(f *fakeAgent, lid int) { f.sayJSON(agent.KindAccept, agent.Accept{ID: 2, Listener: lid + 1}) }},
		{"a listening never asked for", func(f *fakeAgent, lid int) { f.sayJSON(agent.KindListening, agent.Listening{ID: lid + 1}) }},
		{"a second listening", func(f *fakeAgent, lid int) { f.sayJSON(agent.KindListening, agent.Listening{ID: lid}) }},
		{"data for an even id never accepted", func(f *fakeAgent, lid int) { f.say(agent.KindData, data(6, []byte("x"))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newTestConn(t)
			lid, _ := f.listen()
			tc.say(f, lid)
			if !f.c.Gone() {
				t.Error("the connection did not end")
			}
		})
	}

	t.Run("beyond the cap", func(t *testing.T) {
		f := newTestConn(t)
		lid, conns := f.listen()
		for i := range MaxStreams {
			f.sayJSON(agent.KindAccept, agent.Accept{ID: 2 * (i + 1), Listener: lid})
		}
		f.sayJSON(agent.KindAccept, agent.Accept{ID: 2 * (MaxStreams + 1), Listener: lid})
		if fr := f.next(agent.KindReset); !strings.Contains(string(fr.Payload), strconv.Itoa(2*(MaxStreams+1))) || f.c.Gone() {
			t.Errorf("the stream beyond the cap: %q (gone %v)", fr.Payload, f.c.Gone())
		}
		for i := range MaxStreams {
			select {
			case <-conns:
			case <-time.After(10 * time.Second):
				t.Fatalf("%d streams handed over, want %d", i, MaxStreams)
			}
		}
	})
}

// The streams of all a server's agents share one budget: a dial beyond it
// is refused, and a closed stream gives its place back.
func TestStreamServerBudget(t *testing.T) {
	b := &Budget{max: 2}
	f1, f2 := newTestConn(t), newTestConn(t)
	f1.c.mux.budget, f2.c.mux.budget = b, b
	s := f1.dial(1)
	f2.dial(2)
	if _, err := f1.c.dial(context.Background(), 3); !errors.Is(err, ErrTooManyServerStreams) {
		t.Fatalf("a dial beyond the server's budget: %v", err)
	}
	s.Close()
	f1.dial(4)
	if b.n != 2 {
		t.Errorf("budget holds %d, want 2", b.n)
	}
}
