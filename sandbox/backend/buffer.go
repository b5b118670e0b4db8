package backend

import "bytes"

// LimitedBuffer keeps the first N bytes written to it (a command's
// stderr, a probe's output) and discards the rest.
type LimitedBuffer struct {
	B *bytes.Buffer
	N int
}

func (l *LimitedBuffer) Write(p []byte) (int, error) {
	if room := l.N - l.B.Len(); room > 0 {
		l.B.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
