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

// MaxPayload bounds the payload of a frame of any kind but fig; a larger
// length is a protocol error, not an allocation. A legitimate frame is far
// smaller: the runners send output in chunks of at most 64 KiB and cap a
// result's repr at MaxResult characters (at most 12 bytes each once JSON
// escapes them).
const MaxPayload = 1 << 20

// MaxResult bounds, in characters, the repr of a result the runners send.
const MaxResult = 64 << 10

// MaxFigure bounds the length a fig frame may announce. What of it is kept
// is the Gate's decision (the per-call figure budget): a figure the gate
// refuses is read past, never buffered.
const MaxFigure = 256 << 20

// keepBuffer is the largest decode buffer kept between frames; a larger
// one (grown for one large frame) is given back.
const keepBuffer = 64 << 10

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
	// TookUS is how long the interpreter spent on the run, in µs, from
	// the run frame to the done frame (0 from a runner that does not say):
	// the server's debug log splits a call's time with it.
	TookUS int64 `json:"took_us,omitempty"`
}

// Frame is one decoded frame. Payload is only valid during the handler
// call that receives it. Size is the length the frame announced: Payload
// is shorter when the decoder's Gate kept only part of it (nil when none).
type Frame struct {
	Kind    string
	Payload []byte
	Size    int
}

// Gate decides, at a frame's header, how many bytes of its payload of size
// bytes are kept (0 to size); the rest is read past without being
// buffered. It runs on the goroutine that calls Write, before the frame's
// handler.
type Gate func(kind string, size int) (keep int)

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

	max    int             // payload bound; MaxPayload unless Limit says
	figMax int             // a fig frame's bound; MaxFigure unless Limit says
	kinds  map[string]bool // kinds accepted beyond this package's
	gate   Gate

	buf  []byte
	kind string
	size int // the frame's announced length
	need int // payload bytes still expected; -1 while reading a header
	keep int // of those, bytes still to be kept
	err  error
}

// NewDecoder returns a decoder for frames carrying nonce. fail, if not nil,
// is called once with the first protocol error.
func NewDecoder(nonce string, handle func(Frame), fail func(error)) *Decoder {
	return &Decoder{nonce: []byte(nonce), handle: handle, fail: fail, need: -1, max: MaxPayload, figMax: MaxFigure}
}

// Gate makes d ask g how much of each frame's payload to keep.
func (d *Decoder) Gate(g Gate) *Decoder {
	d.gate = g
	return d
}

// Limit makes d accept payloads of at most max bytes, and frames of kinds
// beyond this package's (for the agent's protocol, package agent).
func (d *Decoder) Limit(max int, kinds ...string) *Decoder {
	d.max, d.figMax = max, max
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
		// Payload: the kept part is handed over without copying when it
		// arrived whole; the rest is read past.
		k := min(d.need, len(p))
		chunk := p[:k]
		p = p[k:]
		d.need -= k
		kept := chunk[:min(d.keep, k)]
		d.keep -= len(kept)
		if d.need == 0 && len(d.buf) == 0 {
			d.emit(kept)
			continue
		}
		d.buf = append(d.buf, kept...)
		if d.need == 0 {
			d.emit(d.buf)
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
	bound := d.max
	if string(f[1]) == KindFig {
		bound = d.figMax
	}
	if err != nil || size < 0 || size > bound {
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
	d.need, d.size, d.keep = size, size, size
	if d.gate != nil {
		d.keep = min(max(d.gate(d.kind, size), 0), size)
	}
	return nil
}

// emit hands a frame to the handler and resets the buffer, giving back
// one that a large frame grew.
func (d *Decoder) emit(payload []byte) {
	kind := d.kind
	d.need = -1
	if len(payload) == 0 {
		payload = nil
	}
	d.handle(Frame{Kind: kind, Payload: payload, Size: d.size})
	if cap(d.buf) > keepBuffer {
		d.buf = nil
	} else {
		d.buf = d.buf[:0]
	}
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
