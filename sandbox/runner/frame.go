package runner

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
)

// Frame kinds.
const (
	KindRun   = "run"   // engine → interpreter: a RunRequest
	KindReady = "ready" // interpreter → engine: a Ready, once
	KindOut   = "out"   // user code's stdout bytes
	KindErr   = "err"   // user code's stderr bytes
	KindFig   = "fig"   // a PNG image the code produced
	KindDone  = "done"  // the end of a run: a Done
)

// MaxPayload bounds one frame's payload; a larger length is a protocol
// error, not an allocation.
const MaxPayload = 64 << 20

// maxHeader bounds a frame's header line.
const maxHeader = 96

// ErrProtocol is returned (wrapped) when a stream is not a frame stream.
var ErrProtocol = errors.New("runner protocol error")

// RunRequest asks the interpreter to run code. ID numbers the runs of one
// interpreter.
type RunRequest struct {
	ID   int    `json:"id"`
	Code string `json:"code"`
}

// Ready is the interpreter's greeting.
type Ready struct {
	PID     int    `json:"pid"`
	Version string `json:"version"`
}

// Done ends a run. Result is the repr of a trailing expression's value, or
// nil when there was none (or it was None / undefined).
type Done struct {
	ID       int     `json:"id"`
	ExitCode int     `json:"exit_code"`
	Result   *string `json:"result"`
}

// Frame is one decoded frame. Payload is only valid during the handler
// call that receives it.
type Frame struct {
	Kind    string
	Payload []byte
}

// NewNonce returns a fresh nonce: 32 random hex characters.
func NewNonce() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// AppendFrame appends a frame to dst and returns the extended slice.
func AppendFrame(dst []byte, nonce, kind string, payload []byte) []byte {
	dst = append(dst, nonce...)
	dst = append(dst, ' ')
	dst = append(dst, kind...)
	dst = append(dst, ' ')
	dst = strconv.AppendInt(dst, int64(len(payload)), 10)
	dst = append(dst, '\n')
	return append(dst, payload...)
}

// Decoder splits a stream into frames. It is an io.Writer so it can sit
// behind the backend's output demultiplexer: each Write may carry part of a
// frame or several. Handle is called for each complete frame, from the
// goroutine that calls Write. After the first error (see Err) the rest of
// the stream is discarded.
type Decoder struct {
	nonce  []byte
	handle func(Frame)
	fail   func(error)

	max   int             // payload bound; MaxPayload unless Limit says
	kinds map[string]bool // kinds accepted beyond this package's

	buf  []byte
	kind string
	need int // payload bytes still expected; -1 while reading a header
	err  error
}

// NewDecoder returns a decoder for frames carrying nonce. fail, if not nil,
// is called once with the first protocol error.
func NewDecoder(nonce string, handle func(Frame), fail func(error)) *Decoder {
	return &Decoder{nonce: []byte(nonce), handle: handle, fail: fail, need: -1, max: MaxPayload}
}

// Limit makes d accept payloads of at most max bytes, and frames of kinds
// beyond this package's (for the agent's protocol, package agent).
func (d *Decoder) Limit(max int, kinds ...string) *Decoder {
	d.max = max
	d.kinds = map[string]bool{}
	for _, k := range kinds {
		d.kinds[k] = true
	}
	return d
}

// Err returns the first protocol error, if any.
func (d *Decoder) Err() error { return d.err }

// Write feeds bytes to the decoder. It never returns an error, so the
// stream is always drained; protocol errors are reported through fail.
func (d *Decoder) Write(p []byte) (int, error) {
	n := len(p)
	if d.err != nil {
		return n, nil
	}
	for len(p) > 0 {
		if d.need < 0 {
			i := bytes.IndexByte(p, '\n')
			if i < 0 {
				d.buf = append(d.buf, p...)
				if len(d.buf) > maxHeader {
					d.failWith(fmt.Errorf("%w: header longer than %d bytes: %q", ErrProtocol, maxHeader, clip(d.buf)))
				}
				return n, nil
			}
			d.buf = append(d.buf, p[:i]...)
			p = p[i+1:]
			if err := d.header(d.buf); err != nil {
				d.failWith(err)
				return n, nil
			}
			d.buf = d.buf[:0]
			if d.need == 0 {
				d.emit(nil)
			}
			continue
		}
		// Payload: hand it over without copying when it arrived whole.
		if len(d.buf) == 0 && len(p) >= d.need {
			whole := p[:d.need]
			p = p[d.need:]
			d.emit(whole)
			continue
		}
		k := min(d.need-len(d.buf), len(p))
		d.buf = append(d.buf, p[:k]...)
		p = p[k:]
		if len(d.buf) == d.need {
			d.emit(d.buf)
			d.buf = d.buf[:0]
		}
	}
	return n, nil
}

// header parses "NONCE KIND LENGTH".
func (d *Decoder) header(line []byte) error {
	if len(line) > maxHeader {
		return fmt.Errorf("%w: header longer than %d bytes", ErrProtocol, maxHeader)
	}
	f := bytes.Fields(line)
	if len(f) != 3 || !bytes.Equal(f[0], d.nonce) {
		return fmt.Errorf("%w: not a frame header: %q", ErrProtocol, clip(line))
	}
	size, err := strconv.Atoi(string(f[2]))
	if err != nil || size < 0 || size > d.max {
		return fmt.Errorf("%w: bad frame length %q", ErrProtocol, f[2])
	}
	switch k := string(f[1]); k {
	case KindReady, KindOut, KindErr, KindFig, KindDone, KindRun:
		d.kind = k
	default:
		if !d.kinds[k] {
			return fmt.Errorf("%w: unknown frame kind %q", ErrProtocol, clip(f[1]))
		}
		d.kind = k
	}
	d.need = size
	return nil
}

func (d *Decoder) emit(payload []byte) {
	kind := d.kind
	d.need = -1
	d.handle(Frame{Kind: kind, Payload: payload})
}

func (d *Decoder) failWith(err error) {
	d.err = err
	d.buf = nil
	if d.fail != nil {
		d.fail(err)
	}
}

func clip(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}
