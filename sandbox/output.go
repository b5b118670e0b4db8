package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"unicode/utf8"
)

// capture keeps a stream's output within a byte budget: the first half and
// the last half of the budget, and how much was dropped between them. It
// never holds more than the budget, however much a process prints.
type capture struct {
	mu    sync.Mutex
	limit int
	head  []byte
	tail  []byte // ring buffer of at most limit-len(head) bytes
	pos   int    // next write position in tail once it is full
	full  bool
	total int64
	// onWrite, if set, sees every chunk as it arrives (for streaming).
	onWrite func([]byte)
}

func newCapture(limit int, onWrite func([]byte)) *capture {
	if limit < 64 {
		limit = 64
	}
	return &capture{limit: limit, onWrite: onWrite}
}

func (c *capture) Write(p []byte) (int, error) {
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
	if f != nil {
		f(p)
	}
	return len(p), nil
}

// Truncated reports whether output was dropped.
func (c *capture) Truncated() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.total > int64(len(c.head)+len(c.tail))
}

// String returns what was kept, with a note where output was dropped. The
// result is valid UTF-8 (invalid bytes become U+FFFD).
func (c *capture) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	tail := c.tail
	if c.full && c.pos > 0 {
		tail = append(append([]byte{}, c.tail[c.pos:]...), c.tail[:c.pos]...)
	}
	kept := int64(len(c.head) + len(tail))
	if c.total <= kept {
		return strings.ToValidUTF8(string(c.head)+string(tail), "\uFFFD")
	}
	head := trimInvalidEnd(c.head)
	tail = trimInvalidStart(tail)
	return fmt.Sprintf("%s\n[... %d bytes of output omitted (limits.output_bytes); the first and last parts are shown ...]\n%s",
		strings.ToValidUTF8(string(head), "\uFFFD"), c.total-kept, strings.ToValidUTF8(string(tail), "\uFFFD"))
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
