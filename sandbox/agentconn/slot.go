package agentconn

import (
	"context"
	"sync"
	"time"
)

// Slot is what a sandbox keeps for its agent: the running connection, how
// often it was started, and why it cannot run (then commands go through
// the engine). When to start, and when to give up, are the engine's.
type Slot struct {
	start sync.Mutex // held while the agent is being started

	mu     sync.Mutex
	conn   *Conn
	starts int
	bad    string
}

// BadSlot is a slot whose agent never runs, for why.
func BadSlot(why string) *Slot { return &Slot{bad: why} }

// Running is the slot's live connection, or nil.
func (s *Slot) Running() *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.Gone() {
		return s.conn
	}
	return nil
}

// Starting holds the slot's start lock until done is called, and says
// what the slot holds then: its live connection (nil if none), why the
// agent cannot run ("" if it can) and how often it was started.
func (s *Slot) Starting() (c *Conn, bad string, starts int, done func()) {
	s.start.Lock()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil && !s.conn.Gone() {
		c = s.conn
	}
	return c, s.bad, s.starts, s.start.Unlock
}

// Started counts a start, and keeps c (when not nil) if keep, called
// under the slot's lock, allows; otherwise c is closed.
func (s *Slot) Started(c *Conn, keep func() bool) bool {
	s.mu.Lock()
	s.starts++
	ok := c != nil && keep()
	if ok {
		s.conn = c
	}
	s.mu.Unlock()
	if c != nil && !ok {
		c.Close()
	}
	return ok
}

// Ended is why the slot's last connection ended: nil while it runs, or
// before the first start.
func (s *Slot) Ended() error {
	s.mu.Lock()
	c := s.conn
	s.mu.Unlock()
	if c == nil || !c.Gone() {
		return nil
	}
	return c.deadErr
}

// SetBad records why the agent cannot run.
func (s *Slot) SetBad(why string) {
	s.mu.Lock()
	s.bad = why
	s.mu.Unlock()
}

// State says whether the agent runs, or why it cannot ("" for both
// before the first start decided it).
func (s *Slot) State() (running bool, bad string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bad == "" && s.conn != nil && !s.conn.Gone(), s.bad
}

// Close stops the agent (the sandbox is being removed).
func (s *Slot) Close() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// KillAll has the agent, if it runs, kill every process in the sandbox
// (the sandbox is being stopped); it does not wait for that, and only
// briefly for an agent that does not read its input (the container's
// removal ends it then).
func (s *Slot) KillAll() {
	if c := s.Running(); c != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		c.KillAll(ctx)
	}
}
