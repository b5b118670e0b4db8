package agentconn

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent"
)

// fill has the agent send s a whole window, which nobody reads.
func (f *fakeAgent) fill(s *Stream) {
	for range agent.StreamWindow / agent.StreamChunk {
		f.say(agent.KindData, data(s.id, bytes.Repeat([]byte("z"), agent.StreamChunk)))
	}
}

// resetOf waits for the server's reset frame and returns the stream it names.
func (f *fakeAgent) resetOf() int {
	f.t.Helper()
	var id agent.StreamID
	_ = json.Unmarshal(f.next(agent.KindReset).Payload, &id)
	return id.ID
}

// A stream whose reader takes nothing holds up no other stream of the
// connection, and is cut once it has stood still for streamStallLimit
// (counted again from each read).
func TestStreamStalledReaderCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newTestConn(t)
		stuck, other := f.dial(8000), f.dial(8001)
		f.fill(stuck)
		f.say(agent.KindData, data(other.id, []byte("still flows")))
		got := make([]byte, 64)
		if n, err := other.Read(got); err != nil || string(got[:n]) != "still flows" {
			t.Fatalf("a stream beside a full one: %q %v", got[:n], err)
		}
		time.Sleep(streamStallLimit - time.Second)
		if _, err := stuck.Read(got[:1]); err != nil { // a read, without credit yet
			t.Fatalf("read before the limit: %v", err)
		}
		time.Sleep(streamStallLimit - time.Second)
		synctest.Wait()
		if n := f.c.mux.count(); n != 2 {
			t.Fatalf("%d streams open before the limit from the last read, want 2", n)
		}
		time.Sleep(2 * time.Second)
		if id := f.resetOf(); id != stuck.id {
			t.Fatalf("reset of stream %d, want %d", id, stuck.id)
		}
		if _, err := stuck.Read(got); !errors.Is(err, errStreamStalled) {
			t.Errorf("read of a cut stream: %v", err)
		}
		if n := f.c.mux.count(); n != 1 {
			t.Errorf("%d streams open after the cut, want 1", n)
		}
		f.say(agent.KindData, data(other.id, []byte("and on")))
		if n, err := other.Read(got); err != nil || string(got[:n]) != "and on" {
			t.Errorf("the other stream after the cut: %q %v", got[:n], err)
		}
	})
}

// A write into a program that reads nothing (no credit comes back) fails
// and resets the stream after streamStallLimit without credit, counted
// again from each credit.
func TestStreamUnreadWriteCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newTestConn(t)
		s := f.dial(8000)
		wrote := make(chan error, 1)
		go func() { _, err := s.Write(make([]byte, 3*agent.StreamWindow)); wrote <- err }()
		time.Sleep(streamStallLimit - time.Second)
		f.sayJSON(agent.KindCredit, agent.Credit{ID: s.id, N: agent.StreamWindow})
		time.Sleep(streamStallLimit - time.Second)
		synctest.Wait()
		select {
		case err := <-wrote:
			t.Fatalf("the write ended before the limit from the last credit: %v", err)
		default:
		}
		time.Sleep(2 * time.Second)
		synctest.Wait()
		select {
		case err := <-wrote:
			if !errors.Is(err, errStreamNotRead) {
				t.Errorf("a write nobody reads: %v", err)
			}
		default:
			t.Fatal("a write nobody reads was not cut at the limit")
		}
		if id := f.resetOf(); id != s.id {
			t.Errorf("reset of stream %d, want %d", id, s.id)
		}
	})
}

// A preview's dials leave room streams for the sandbox's proxy (the
// engine's proxyBusyRoom), and are refused at once beyond that, never
// queued.
func TestStreamPreviewLeavesRoom(t *testing.T) {
	const room = 16
	f := newTestConn(t)
	for range MaxStreams - room {
		f.dial(8000)
	}
	_, err := f.c.Dial(context.Background(), 8000, room)
	if !errors.Is(err, ErrTooManyStreams) || !strings.Contains(err.Error(), "close some") {
		t.Fatalf("a preview dial beyond its share: %v", err)
	}
	f.dial(8000) // the proxy's room
}

// An agent that stops reading its input (the sandbox's code can SIGSTOP
// it): a frame it does not take in before the call's context ends cuts the
// connection, and the write blocked on it, the writers queued behind it and
// every later one return. (Not in a synctest bubble: a writer queued on
// the write lock is not durably blocked.)
func TestWriteToAgentNotReading(t *testing.T) {
	srv, ag := net.Pipe() // the agent's end is never read
	defer ag.Close()
	c := newConn(testNonce, nil)
	c.proc = &pipeProc{w: srv, done: make(chan struct{})}
	go c.watch()
	frame := []byte("frame\n")
	errs := make(chan error, 2)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { errs <- c.write(ctx, frame) }()
	go func() { errs <- c.write(context.Background(), frame) }() // no end of its own
	time.Sleep(200 * time.Millisecond)
	if len(errs) != 0 || c.Gone() {
		t.Fatalf("a write ended before its context did: %v", <-errs)
	}
	cancel()
	for range 2 {
		select {
		case err := <-errs:
			if err == nil {
				t.Error("a write to an agent that reads nothing succeeded")
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a write still blocked after a writer's context ended")
		}
	}
	if !c.Gone() {
		t.Error("the connection is not cut once a write's context ended")
	}
	if err := c.write(context.Background(), frame); !errors.Is(err, ErrDied) {
		t.Errorf("a write after the cut: %v, want ErrDied", err)
	}
}
