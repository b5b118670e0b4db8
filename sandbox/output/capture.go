package output

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// Capture keeps a stream's output within a byte budget: the first half and
// the last half of the budget, and how much was dropped between them. It
// never holds more than the budget, however much a process prints. A call's
// stdout and stderr share their budget (NewPair).
type Capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte // ring buffer of at most limit-len(head) bytes
	pos   int    // next write position in tail once it is full
	full  bool
	total int64
	// onWrite, if set, sees every chunk as it arrives (for streaming).
	onWrite func([]byte)
	// peer is the call's other stream, with which the budget is shared;
	// file keeps the call's whole output (file.go). Either may be nil.
	peer *Capture
	file *File
}

// NewPair returns a call's stdout and stderr: together they return at
// most limit bytes, each passes what it gets to its on func (which may be
// nil, for streaming), and file (which may be nil) gets all of both.
func NewPair(limit int, onStdout, onStderr func([]byte), file *File) (stdout, stderr *Capture) {
	stdout = NewCapture(limit, onStdout)
	stderr = NewCapture(limit, onStderr)
	stdout.peer, stderr.peer = stderr, stdout
	stdout.file, stderr.file = file, file
	return stdout, stderr
}

// NewCapture returns a stream of its own that keeps at most limit bytes
// (at least 64); onWrite, if set, sees every chunk as it arrives.
func NewCapture(limit int, onWrite func([]byte)) *Capture {
	if limit < 64 {
		limit = 64
	}
	return &Capture{limit: limit, onWrite: onWrite}
}

func (c *Capture) Write(p []byte) (int, error) {
	c.mu.Lock()
	c.total += int64(len(p))
	rest := p
	if room := c.limit/2 - len(c.head); room > 0 {
		n := min(room, len(rest))
		c.head = append(c.head, rest[:n]...)
		rest = rest[n:]
	}
	tailMax := c.limit - c.limit/2
	for len(rest) > 0 {
		if !c.full {
			n := min(tailMax-len(c.tail), len(rest))
			c.tail = append(c.tail, rest[:n]...)
			rest = rest[n:]
			if len(c.tail) == tailMax {
				c.full = true
				c.pos = 0
			}
			continue
		}
		if len(rest) >= tailMax {
			copy(c.tail, rest[len(rest)-tailMax:])
			c.pos = 0
			break
		}
		n := copy(c.tail[c.pos:], rest)
		c.pos = (c.pos + n) % tailMax
		rest = rest[n:]
	}
	f := c.onWrite
	c.mu.Unlock()
	c.file.write(p)
	if f != nil {
		f(p)
	}
	return len(p), nil
}

// kept is how many bytes c holds.
func (c *Capture) kept() int {
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.head) + len(c.tail)
}

// share is how many of its kept bytes a stream returns when it and its
// peer hold mine and theirs: all of both if they fit the limit, else a
// stream within half of it keeps all and the other the rest.
func share(mine, theirs, limit int) int {
	switch {
	case mine+theirs <= limit, mine <= limit/2:
		return mine
	case theirs <= limit/2:
		return limit - theirs
	}
	return limit / 2
}

// Truncated reports whether output was dropped.
func (c *Capture) Truncated() bool {
	n := c.peer.kept()
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(share(len(c.head)+len(c.tail), n, c.limit))
}

// String returns what was kept, with a note where output was dropped. The
// result is valid UTF-8 (invalid bytes become U+FFFD).
func (c *Capture) String() string {
	theirs := c.peer.kept()
	c.mu.Lock()
	defer c.mu.Unlock()
	head, tail := c.head, c.tail
	if c.full && c.pos > 0 {
		tail = append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	}
	if n := share(len(head)+len(tail), theirs, c.limit); n < len(head)+len(tail) {
		// Half each, or all of a short tail and the rest from the head.
		t := min(len(tail), n-min(len(head), n/2))
		head, tail = head[:n-t], tail[len(tail)-t:]
	}
	kept := int64(len(head) + len(tail))
	if c.total <= kept {
		return strings.ToValidUTF8(string(head)+string(tail), "\uFFFD")
	}
	where := c.file.note()
	if where == "" {
		where = "; the first and last parts are shown"
	}
	head = trimInvalidEnd(head)
	tail = trimInvalidStart(tail)
	return fmt.Sprintf("%s\n[... %d bytes of output omitted (limits.output_bytes)%s ...]\n%s",
		strings.ToValidUTF8(string(head), "\uFFFD"), c.total-kept, where, strings.ToValidUTF8(string(tail), "\uFFFD"))
}

// trimInvalidEnd drops a multi-byte character cut in half at the end.
func trimInvalidEnd(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0; i++ {
		r, size := utf8.DecodeLastRune(b)
		if r != utf8.RuneError || size != 1 {
			return b
		}
		b = b[:len(b)-1]
	}
	return b
}

// trimInvalidStart drops continuation bytes of a character cut in half at
// the start.
func trimInvalidStart(b []byte) []byte {
	for i := 0; i < utf8.UTFMax && len(b) > 0 && !utf8.RuneStart(b[0]); i++ {
		b = b[1:]
	}
	return b
}
