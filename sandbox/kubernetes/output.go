package kubernetes

import (
	"bytes"
	"io"
	"strconv"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// output hands a process's stdout and stderr to the caller's writers one
// write at a time (the stream library writes each from a goroutine of its
// own; the contract promises no concurrent writes), and drops what comes
// after close.
type output struct {
	mu       sync.Mutex
	out, err io.Writer
	closed   bool
}

func newOutput(stdout, stderr io.Writer) *output {
	return &output{out: backend.OrDiscard(stdout), err: backend.OrDiscard(stderr)}
}

func (o *output) stdout() io.Writer { return outWriter{o, false} }
func (o *output) stderr() io.Writer { return outWriter{o, true} }

// close drops all later output.
func (o *output) close() {
	o.mu.Lock()
	o.closed = true
	o.mu.Unlock()
}

type outWriter struct {
	o     *output
	isErr bool
}

func (w outWriter) Write(p []byte) (int, error) {
	w.o.mu.Lock()
	defer w.o.mu.Unlock()
	if w.o.closed {
		return len(p), nil
	}
	dst := w.o.out
	if w.isErr {
		dst = w.o.err
	}
	if _, err := dst.Write(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// trailerWriter passes a stream on until the trailer line that starts with
// marker, which it takes off: it holds back a tail that could be the
// marker's start, and closes seen once the whole line is in.
type trailerWriter struct {
	next   io.Writer
	marker []byte
	seen   chan struct{}

	mu   sync.Mutex
	held []byte
	code int
	done bool
}

func newTrailerWriter(next io.Writer, marker string) *trailerWriter {
	return &trailerWriter{next: next, marker: []byte(marker), seen: make(chan struct{})}
}

func (w *trailerWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return n, nil // after the trailer: the background's, not read
	}
	w.held = append(w.held, p...)
	var out []byte
	found := false
	if i := bytes.Index(w.held, w.marker); i >= 0 {
		rest := w.held[i+len(w.marker):]
		j := bytes.IndexByte(rest, '\n')
		if j < 0 {
			out, w.held = w.held[:i], append([]byte(nil), w.held[i:]...)
		} else {
			out, found = w.held[:i], true
			w.code, _ = strconv.Atoi(string(rest[:j]))
		}
	} else {
		keep := partialMarker(w.held, w.marker)
		out, w.held = w.held[:len(w.held)-keep], append([]byte(nil), w.held[len(w.held)-keep:]...)
	}
	var err error
	if len(out) > 0 {
		// Before seen closes: whoever waits for it may stop the output.
		_, err = w.next.Write(out)
	}
	if found {
		w.held, w.done = nil, true
		close(w.seen)
	}
	if err != nil {
		return n, err
	}
	return n, nil
}

// status is the exit status from the trailer, once seen. Without it,
// whatever was held back is passed on (the stream ended another way).
func (w *trailerWriter) status() (int, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return w.code, true
	}
	if len(w.held) > 0 {
		_, _ = w.next.Write(w.held)
		w.held = nil
	}
	return 0, false
}

// partialMarker is the length of the longest tail of b that is the start
// of marker (held back until the next write says whether it is).
func partialMarker(b, marker []byte) int {
	for n := min(len(b), len(marker)-1); n > 0; n-- {
		if bytes.HasPrefix(marker, b[len(b)-n:]) {
			return n
		}
	}
	return 0
}
