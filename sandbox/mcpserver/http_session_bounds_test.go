package mcpserver

import (
	"testing"
	"time"
)

// TestHTTPSessionBounds: a session unused for httpSessionIdle expires, and
// when maxHTTPSessions are remembered the one used least recently goes
// first, so the table stays bounded; each one that goes ends its scope
// (its sandboxes are stopped).
func TestHTTPSessionBounds(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	var ended []string
	c := newHTTPSessions(func(scope string) { ended = append(ended, scope) })
	c.now = func() time.Time { return now }

	idle, idleScope := c.issue("idle")
	now = now.Add(httpSessionIdle + time.Second)
	if _, ok := c.use(idle); ok {
		t.Error("a session unused for longer than httpSessionIdle is still live")
	}
	if len(ended) != 1 || ended[0] != idleScope {
		t.Errorf("ended scopes %q, want the expired session's %q", ended, idleScope)
	}

	first, firstScope := c.issue("first")
	kept, _ := c.issue("kept")
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
	if len(ended) != 2 || ended[1] != firstScope {
		t.Errorf("ended scopes %q, want the evicted session's %q last", ended, firstScope)
	}
	if _, ok := c.use(kept); !ok {
		t.Error("a recently used session was forgotten")
	}
}
