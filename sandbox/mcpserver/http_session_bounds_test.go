package mcpserver

import (
	"testing"
	"time"
)

// TestHTTPSessionBounds: a session unused for httpSessionIdle expires, and
// when maxHTTPSessions are remembered the one used least recently goes
// first, so the table stays bounded.
func TestHTTPSessionBounds(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	c := newHTTPSessions()
	c.now = func() time.Time { return now }

	idle := c.issue("idle")
	now = now.Add(httpSessionIdle + time.Second)
	if _, ok := c.use(idle); ok {
		t.Error("a session unused for longer than httpSessionIdle is still live")
	}

	first := c.issue("first")
	kept := c.issue("kept")
	for i := 2; i < maxHTTPSessions; i++ {
		now = now.Add(time.Millisecond)
		c.issue("")
	}
	now = now.Add(time.Millisecond)
	if s, ok := c.use(kept); !ok || s.name != "kept" {
		t.Fatalf("use(kept) = %v, %v", s, ok)
	}
	c.issue("one more")
	if len(c.ids) != maxHTTPSessions {
		t.Errorf("%d sessions remembered, want %d", len(c.ids), maxHTTPSessions)
	}
	if _, ok := c.use(first); ok {
		t.Error("the session used least recently was not the one forgotten")
	}
	if _, ok := c.use(kept); !ok {
		t.Error("a recently used session was forgotten")
	}
}
