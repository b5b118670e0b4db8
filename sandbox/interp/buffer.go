package interp

import (
	"bytes"
	"sync"
)

// buffer keeps the first n bytes written to it, and says when it cut
// some: an interpreter's own stderr, or output written between runs.
type buffer struct {
	mu  sync.Mutex
	b   bytes.Buffer
	n   int
	cut bool
}

func newBuffer(n int) *buffer { return &buffer{n: n} }

func (l *buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	room := l.n - l.b.Len()
	if room < len(p) {
		l.cut = true
	}
	l.b.Write(p[:max(0, min(room, len(p)))])
	return len(p), nil
}

func (l *buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cut {
		return l.b.String() + "\n[… cut]\n"
	}
	return l.b.String()
}
