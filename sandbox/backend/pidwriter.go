package backend

import (
	"bytes"
	"context"
	"io"
	"strconv"
	"sync"
)

// PIDWriter takes the first line of a process's output, the PID its
// wrapper script echoes before it runs the command (the PID that
// KillTreeScript is later given), and passes the rest on to next. A first
// line that has no newline within 32 bytes is not a PID line: it is passed
// on whole, and the PID stays 0. Both backends use it for their execs.
type PIDWriter struct {
	next  io.Writer
	ready chan struct{}

	mu   sync.Mutex
	buf  []byte
	pid  int
	done bool
}

// NewPIDWriter returns a PIDWriter that passes the output after the PID
// line on to next.
func NewPIDWriter(next io.Writer) *PIDWriter {
	return &PIDWriter{next: next, ready: make(chan struct{})}
}

// maxPIDLine is the longest first line still read as a PID.
const maxPIDLine = 32

// Write reads the PID line, then passes everything on.
func (w *PIDWriter) Write(p []byte) (int, error) {
	n := len(p)
	w.mu.Lock()
	if !w.done {
		w.buf = append(w.buf, p...)
		i := bytes.IndexByte(w.buf, '\n')
		if i < 0 && len(w.buf) <= maxPIDLine {
			w.mu.Unlock()
			return n, nil
		}
		if i >= 0 {
			w.pid, _ = strconv.Atoi(string(w.buf[:i]))
			p = w.buf[i+1:]
		} else { // not a PID line: give up and pass it on
			p = w.buf
		}
		w.buf, w.done = nil, true
		close(w.ready)
	}
	w.mu.Unlock()
	if len(p) == 0 {
		return n, nil
	}
	if _, err := w.next.Write(p); err != nil {
		return n, err
	}
	return n, nil
}

// Ready is closed once the first line was read (or given up on).
func (w *PIDWriter) Ready() <-chan struct{} { return w.ready }

// PID is the PID read, 0 until Ready or when the first line was not one.
func (w *PIDWriter) PID() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pid
}

// WaitPID waits for the PID line, at most until done is closed (the
// process's output ended without one) or ctx ends, and returns the PID
// read (0 when none was).
func (w *PIDWriter) WaitPID(ctx context.Context, done <-chan struct{}) int {
	select {
	case <-w.ready:
	case <-done:
	case <-ctx.Done():
	}
	return w.PID()
}

// OrDiscard returns w, or io.Discard when w is nil.
func OrDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
