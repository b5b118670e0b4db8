package cli

import (
	"io"
	"sync"
	"time"
)

// logQueue is how many log lines wait for a slow stderr before new ones
// are dropped.
const logQueue = 256

// asyncWriter passes what is written to out from a goroutine of its own,
// so that a logger never blocks on it: the server's stderr is a pipe its
// client may stop reading (or close), and logging must never stall the
// server's clean-up. Lines that do not fit in the queue are dropped; after
// out fails once, everything is.
type asyncWriter struct {
	lines chan []byte
	done  chan struct{}

	mu     sync.Mutex
	closed bool
}

func newAsyncWriter(out io.Writer) *asyncWriter {
	w := &asyncWriter{lines: make(chan []byte, logQueue), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		failed := false
		for b := range w.lines {
			if !failed {
				_, err := out.Write(b)
				failed = err != nil
			}
		}
	}()
	return w
}

// Write queues a copy of p, or drops it when the queue is full or the
// writer is closed. It never fails: a log line is not worth an error.
func (w *asyncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return len(p), nil
	}
	select {
	case w.lines <- append([]byte(nil), p...):
	default:
	}
	return len(p), nil
}

// Close lets the queue drain for at most wait; later writes are dropped.
func (w *asyncWriter) Close(wait time.Duration) {
	w.mu.Lock()
	if !w.closed {
		w.closed = true
		close(w.lines)
	}
	w.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-w.done:
	case <-t.C:
	}
}
