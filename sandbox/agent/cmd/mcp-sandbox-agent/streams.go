package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agent/proto"
)

// maxStreams bounds the streams open at once; the server keeps its own,
// lower, bound.
const maxStreams = 1024

// dialTimeout bounds a connection to the sandbox's loopback.
const dialTimeout = 10 * time.Second

// stream is one TCP connection on the sandbox's loopback, carried over the
// agent's stdin and stdout (see package proto).
type stream struct {
	a    *agent
	id   int
	conn *net.TCPConn

	mu     sync.Mutex
	cond   *sync.Cond
	credit int    // bytes this end may still send the server
	buf    []byte // bytes from the server not yet written to conn
	spare  []byte // the buffer drain last wrote from, for put to fill next
	eof    bool   // the server sends no more
	reset  bool   // abandoned
	halves int    // directions finished (2: the stream is done)
	owed   int    // bytes drain wrote and has not given credit for (drain's)
}

// onStream handles a stream frame; an error ends the agent (the server
// broke the protocol).
func (a *agent) onStream(kind string, payload []byte) error {
	if kind == "data" {
		i := bytes.IndexByte(payload, '\n')
		id, err := strconv.Atoi(string(payload[:max(i, 0)]))
		if i < 0 || err != nil {
			return errors.New("bad data frame")
		}
		if s := a.stream(id); s != nil {
			s.put(payload[i+1:])
		}
		return nil
	}
	var m proto.Credit // Dial, Credit and StreamID share ID; Dial's port is read below
	if err := json.Unmarshal(payload, &m); err != nil {
		return err
	}
	switch kind {
	case "dial":
		var d proto.Dial
		if err := json.Unmarshal(payload, &d); err != nil {
			return err
		}
		go a.dial(d)
	case "listen":
		var l proto.Listen
		if err := json.Unmarshal(payload, &l); err != nil {
			return err
		}
		go a.listen(l)
	case "unlisten":
		a.mu.Lock()
		ln := a.listeners[m.ID]
		delete(a.listeners, m.ID)
		a.mu.Unlock()
		if ln != nil {
			_ = ln.Close()
		}
	case "credit":
		if s := a.stream(m.ID); s != nil {
			s.grant(m.N)
		}
	case "eof":
		if s := a.stream(m.ID); s != nil {
			s.mu.Lock()
			s.eof = true
			s.cond.Broadcast()
			s.mu.Unlock()
		}
	case "reset":
		if s := a.stream(m.ID); s != nil {
			s.abort(false)
		}
	}
	return nil
}

func (a *agent) stream(id int) *stream {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.streams[id]
}

// dial connects stream d.ID to d.Port on the loopback and answers.
func (a *agent) dial(d proto.Dial) {
	answer := func(err error) {
		m := proto.Dialed{ID: d.ID}
		if err != nil {
			m.Err = err.Error()
		}
		b, _ := json.Marshal(m)
		a.send("dialed", b)
	}
	if d.Port < 1 || d.Port > 65535 {
		answer(errors.New("bad port"))
		return
	}
	c, err := net.DialTimeout("tcp", "127.0.0.1:"+strconv.Itoa(d.Port), dialTimeout)
	if err != nil {
		answer(err)
		return
	}
	s := newStream(a, d.ID, c.(*net.TCPConn))
	a.mu.Lock()
	_, dup := a.streams[d.ID]
	full := len(a.streams) >= maxStreams
	if !dup && !full {
		a.streams[d.ID] = s
	}
	a.mu.Unlock()
	if dup || full {
		c.Close()
		answer(errors.New("stream refused: duplicate id or too many streams"))
		return
	}
	answer(nil)
	go s.pump()
	go s.drain()
}

func newStream(a *agent, id int, c *net.TCPConn) *stream {
	s := &stream{a: a, id: id, conn: c, credit: proto.StreamWindow}
	s.cond = sync.NewCond(&s.mu)
	return s
}

// listen listens on l.Port of the loopback, answers, and hands each
// connection to the server as a new stream until unlisten (or the end).
func (a *agent) listen(l proto.Listen) {
	answer := func(port int, err error) {
		m := proto.Listening{ID: l.ID, Port: port}
		if err != nil {
			m.Err = err.Error()
		}
		b, _ := json.Marshal(m)
		a.send("listening", b)
	}
	if l.Port < 0 || l.Port > 65535 {
		answer(0, errors.New("bad port"))
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(l.Port))
	if err != nil {
		answer(0, err)
		return
	}
	a.mu.Lock()
	_, dup := a.listeners[l.ID]
	if !dup {
		a.listeners[l.ID] = ln
	}
	a.mu.Unlock()
	if dup {
		ln.Close()
		answer(0, errors.New("duplicate listener id"))
		return
	}
	answer(ln.Addr().(*net.TCPAddr).Port, nil)
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed by unlisten
		}
		a.mu.Lock()
		full := len(a.streams) >= maxStreams
		var s *stream
		if !full {
			a.accepted += 2
			s = newStream(a, a.accepted, c.(*net.TCPConn))
			a.streams[s.id] = s
		}
		a.mu.Unlock()
		if full {
			c.Close()
			continue
		}
		b, _ := json.Marshal(proto.Accept{ID: s.id, Listener: l.ID})
		a.send("accept", b)
		go s.pump()
		go s.drain()
	}
}

// put takes bytes the server sent; more than the credit given is the
// server's error, and abandons the stream.
func (s *stream) put(b []byte) {
	s.mu.Lock()
	if s.reset || s.eof || len(s.buf)+len(b) > proto.AgentWindow {
		s.mu.Unlock()
		s.abort(true)
		return
	}
	s.buf = append(s.buf, b...)
	s.cond.Broadcast()
	s.mu.Unlock()
}

func (s *stream) grant(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n > 0 && s.credit+n <= proto.StreamWindow {
		s.credit += n
		s.cond.Broadcast()
	}
}

// pump sends what the connection yields to the server, within the credit.
func (s *stream) pump() {
	prefix := strconv.Itoa(s.id) + "\n"
	buf := make([]byte, len(prefix)+proto.StreamChunk)
	copy(buf, prefix)
	for {
		s.mu.Lock()
		for s.credit == 0 && !s.reset {
			s.cond.Wait()
		}
		n := min(s.credit, proto.StreamChunk)
		reset := s.reset
		s.mu.Unlock()
		if reset {
			return
		}
		m, err := s.conn.Read(buf[len(prefix) : len(prefix)+n])
		if m > 0 {
			s.mu.Lock()
			s.credit -= m
			reset = s.reset
			s.mu.Unlock()
			if reset {
				return
			}
			s.a.send("data", buf[:len(prefix)+m])
		}
		if err == io.EOF {
			s.a.sendID("eof", s.id)
			s.half()
			return
		}
		if err != nil {
			s.abort(true)
			return
		}
	}
}

// drain writes what the server sent to the connection, and gives the
// server credit for it.
func (s *stream) drain() {
	for {
		s.mu.Lock()
		for len(s.buf) == 0 && !s.eof && !s.reset {
			s.cond.Wait()
		}
		b, eof, reset := s.buf, s.eof, s.reset
		s.buf, s.spare = s.spare[:0], nil
		s.mu.Unlock()
		if reset {
			return
		}
		if len(b) == 0 && eof {
			_ = s.conn.CloseWrite()
			s.half()
			return
		}
		if _, err := s.conn.Write(b); err != nil {
			s.abort(true)
			return
		}
		s.mu.Lock()
		if !s.reset {
			s.spare = b // two buffers take turns, instead of one per frame
		}
		s.mu.Unlock()
		// Credit goes back a quarter window at a time: the server, which
		// sent a whole window without it, is never left waiting on bytes
		// drain has written but not credited.
		s.owed += len(b)
		if s.owed >= proto.AgentWindow/4 {
			m, _ := json.Marshal(proto.Credit{ID: s.id, N: s.owed})
			s.a.send("credit", m)
			s.owed = 0
		}
	}
}

// half marks one direction finished; after both, the stream is done.
func (s *stream) half() {
	s.mu.Lock()
	s.halves++
	done := s.halves == 2
	s.mu.Unlock()
	if done {
		s.forget()
	}
}

// abort abandons the stream, telling the server when it did not ask.
func (s *stream) abort(tell bool) {
	s.mu.Lock()
	was := s.reset
	s.reset = true
	s.buf = nil
	s.cond.Broadcast()
	s.mu.Unlock()
	if was {
		return
	}
	s.forget()
	if tell {
		s.a.sendID("reset", s.id)
	}
}

func (s *stream) forget() {
	_ = s.conn.Close()
	s.a.mu.Lock()
	if s.a.streams[s.id] == s {
		delete(s.a.streams, s.id)
	}
	s.a.mu.Unlock()
}

func (a *agent) sendID(kind string, id int) {
	b, _ := json.Marshal(proto.StreamID{ID: id})
	a.send(kind, b)
}
