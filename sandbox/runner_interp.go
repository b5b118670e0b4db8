package sandbox

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image/png"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

const (
	// interpStartTimeout bounds an interpreter's start-up (a cold image
	// under gVisor can be slow).
	interpStartTimeout = 20 * time.Second
	// maxFigures bounds the images one run returns.
	maxFigures = 16
)

// errInterpUnusable says an interpreter cannot run in a sandbox (no
// python3 or node in the image, or one that does not speak the protocol);
// the caller falls back to one exec per call.
var errInterpUnusable = errors.New("resident interpreter unusable")

// interp is a resident interpreter running in a sandbox, reached over an
// attached exec (see package runner for the protocol).
type interp struct {
	kind  string
	nonce string
	proc  Process
	diag  *capture // the interpreter's own stderr, for error messages
	ready chan runner.Ready

	brokenOnce sync.Once
	broken     chan struct{}
	brokenErr  error

	nextID int // owned by the slot holder

	// figures is the server's figure budget; the figures a run keeps
	// are taken from it (budget.go).
	figures *byteBudget

	mu   sync.Mutex
	call *interpCall
	// figFor is the run the fig frame being read was admitted for (its
	// payload may end after that run has).
	figFor *interpCall
	// between holds output written while no run was in progress (a
	// background thread or process), for the next run: stdout, stderr.
	between [2]*capture
}

// betweenBytes bounds the output kept from between runs, per stream.
const betweenBytes = 16 << 10

// interpCall is the run in progress: where its frames go.
type interpCall struct {
	id             int
	stdout, stderr *capture
	done           chan runner.Done
	figs           figureTally
	// ended: the run is over; a figure admitted for it that arrives now
	// is dropped (its bytes were given back with the run's).
	ended bool
}

// figureTally is what a run kept of its figures and what it dropped.
type figureTally struct {
	figures  []Figure
	left     int // bytes of limits.image_bytes not yet taken
	reserved int // bytes taken from the server's budget, figures in flight included
	pending  int // figures admitted whose payload has not arrived
	// dropped figures and their bytes; busy: some were dropped because
	// the server's budget was in use by other calls.
	dropped      int
	droppedBytes int64
	busy         bool
	// forged: dropped figures that were not PNG images (counted in
	// dropped too).
	forged int
}

func (t *figureTally) drop(size int, busy bool) {
	t.dropped++
	t.droppedBytes += int64(size)
	t.busy = t.busy || busy
}

// interpResult is how a run ended, as far as the interpreter is concerned.
type interpResult struct {
	done runner.Done
	// figs: what a run that ended with done kept; its reserved bytes
	// are the caller's to give back.
	figs figureTally
	// exited: the interpreter ended during the run (status says how).
	exited bool
	status ExecStatus
	// killed: ctx ended first and the interpreter's tree was killed.
	killed bool
	// broken: the interpreter stopped speaking the protocol.
	broken error
}

// startInterp starts an interpreter of kind in sb and waits until it is
// ready. An error wrapping errInterpUnusable means the sandbox cannot run
// one; other errors are the backend's or ctx's.
func startInterp(ctx context.Context, at Attacher, sb *Sandbox, kind string, figures *byteBudget) (*interp, error) {
	it := &interp{
		kind: kind, nonce: runner.NewNonce(), diag: newCapture(4096, nil),
		ready: make(chan runner.Ready, 1), broken: make(chan struct{}), figures: figures,
	}
	dec := runner.NewDecoder(it.nonce, it.onFrame, it.fail).Gate(it.gate)
	proc, err := at.Attach(ctx, sb.ContainerID, ExecSpec{
		Cmd: runner.Argv(kind), Env: sb.env, WorkDir: Workspace, User: sb.User, Stdout: dec, Stderr: it.diag,
	})
	if err != nil {
		return nil, err
	}
	it.proc = proc
	// A write error means the process is already gone; Done says so below.
	_, _ = proc.Write(runner.Boot(kind, it.nonce))
	t := time.NewTimer(interpStartTimeout)
	defer t.Stop()
	select {
	case <-it.ready:
		return it, nil
	case <-proc.Done():
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		st, werr := proc.Wait(wctx)
		if werr != nil {
			return nil, werr
		}
		return nil, fmt.Errorf("%w: %s interpreter exited with code %d at start: %s", errInterpUnusable, kind, st.ExitCode, it.diagText())
	case <-it.broken:
		it.kill(ctx)
		return nil, fmt.Errorf("%w: %s interpreter: %v", errInterpUnusable, kind, it.brokenErr)
	case <-t.C:
		it.kill(ctx)
		return nil, fmt.Errorf("%w: %s interpreter did not start within %s: %s", errInterpUnusable, kind, interpStartTimeout, it.diagText())
	case <-ctx.Done():
		it.kill(ctx)
		return nil, ctx.Err()
	}
}

func (it *interp) diagText() string {
	s := strings.TrimSpace(it.diag.String())
	if s == "" {
		return "no message"
	}
	return s
}

// onFrame receives frames from the backend's output goroutine.
func (it *interp) onFrame(f runner.Frame) {
	switch f.Kind {
	case runner.KindReady:
		var r runner.Ready
		if err := json.Unmarshal(f.Payload, &r); err != nil {
			it.fail(fmt.Errorf("%w: bad ready frame: %v", runner.ErrProtocol, err))
			return
		}
		select {
		case it.ready <- r:
		default:
		}
		return
	}
	it.mu.Lock()
	if f.Kind == runner.KindFig {
		it.takeFigure(f)
		it.mu.Unlock()
		return
	}
	c := it.call
	if c == nil {
		// Output between runs (a background thread or process): kept for
		// the next run.
		k := -1
		switch f.Kind {
		case runner.KindOut:
			k = 0
		case runner.KindErr:
			k = 1
		}
		if k >= 0 {
			if it.between[k] == nil {
				it.between[k] = newCapture(betweenBytes, nil)
			}
			_, _ = it.between[k].Write(f.Payload)
		}
		it.mu.Unlock()
		return
	}
	switch f.Kind {
	case runner.KindDone:
		var d runner.Done
		if err := json.Unmarshal(f.Payload, &d); err != nil {
			it.mu.Unlock()
			it.fail(fmt.Errorf("%w: bad done frame: %v", runner.ErrProtocol, err))
			return
		}
		if d.ID == c.id {
			select {
			case c.done <- d:
			default:
			}
		}
	}
	it.mu.Unlock()
	switch f.Kind {
	case runner.KindOut:
		_, _ = c.stdout.Write(f.Payload)
	case runner.KindErr:
		_, _ = c.stderr.Write(f.Payload)
	}
}

// gate decides at a frame's header how much of it is kept. Frames other
// than figures are bounded by runner.MaxPayload and cut to the output
// budget as they arrive; a figure is kept only when the run in progress
// has room for it (at most maxFigures, limits.image_bytes in all) and the
// server's figure budget has its bytes, else it is read past and counted
// as dropped.
func (it *interp) gate(kind string, size int) int {
	if kind != runner.KindFig {
		return size
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	it.figFor = nil
	c := it.call
	switch {
	case c == nil:
		return 0 // between runs: a figure no run asked for
	case size == 0 || len(c.figs.figures)+c.figs.pending >= maxFigures || size > c.figs.left:
		c.figs.drop(size, false)
		return 0
	case !it.figures.take(size):
		c.figs.drop(size, true)
		return 0
	}
	c.figs.left -= size
	c.figs.reserved += size
	c.figs.pending++
	it.figFor = c
	return size
}

// takeFigure keeps a figure the gate admitted, for the run it was
// admitted for, if that run is still going. Called with it.mu held.
func (it *interp) takeFigure(f runner.Frame) {
	c := it.figFor
	it.figFor = nil
	if c == nil || len(f.Payload) == 0 {
		return // refused by the gate
	}
	c.figs.pending--
	if c.ended || len(f.Payload) != f.Size {
		return
	}
	// Any process in the sandbox can send a "figure": only a PNG (its
	// signature and a valid header) goes to the client as an image.
	if !validPNG(f.Payload) {
		it.figures.give(f.Size)
		c.figs.reserved -= f.Size
		c.figs.dropped++
		c.figs.forged++
		return
	}
	c.figs.figures = append(c.figs.figures, Figure{MIME: "image/png", Data: append([]byte(nil), f.Payload...)})
}

// validPNG reports whether b starts with a PNG signature and a valid
// header chunk (its checksum included).
func validPNG(b []byte) bool {
	_, err := png.DecodeConfig(bytes.NewReader(b))
	return err == nil
}

func (it *interp) fail(err error) {
	it.brokenOnce.Do(func() {
		it.brokenErr = err
		close(it.broken)
	})
}

// gone reports whether the interpreter has ended.
func (it *interp) gone() bool {
	select {
	case <-it.proc.Done():
		return true
	case <-it.broken:
		return true
	default:
		return false
	}
}

// run sends code to the interpreter and waits for the run to end, for the
// interpreter to end, or for ctx to end (then the interpreter and
// everything it started are killed). Only one run may be in progress. The
// run keeps at most imageBytes of figures; when it ends with done, the
// caller gives their bytes back to the server's budget (r.figs.reserved).
func (it *interp) run(ctx context.Context, code string, stdout, stderr *capture, imageBytes int) interpResult {
	it.nextID++
	c := &interpCall{id: it.nextID, stdout: stdout, stderr: stderr, done: make(chan runner.Done, 1), figs: figureTally{left: imageBytes}}
	it.mu.Lock()
	it.call = c
	earlier := it.between
	it.between = [2]*capture{}
	it.mu.Unlock()
	for k, w := range []*capture{stdout, stderr} {
		if b := earlier[k]; b != nil {
			_, _ = w.Write([]byte("[written after the previous call had ended]\n" + b.String()))
			if s := b.String(); s != "" && s[len(s)-1] != '\n' {
				_, _ = w.Write([]byte("\n"))
			}
			_, _ = w.Write([]byte("[this call]\n"))
		}
	}
	req, _ := json.Marshal(runner.RunRequest{ID: c.id, Code: code})
	_, _ = it.proc.Write(runner.AppendFrame(nil, it.nonce, runner.KindRun, req))
	r := it.wait(ctx, c)

	it.mu.Lock()
	it.call = nil
	c.ended = true
	figs := c.figs
	it.mu.Unlock()
	if r.exited || r.killed || r.broken != nil {
		it.figures.give(figs.reserved)
		figs = figureTally{dropped: figs.dropped, droppedBytes: figs.droppedBytes, busy: figs.busy}
	}
	r.figs = figs
	return r
}

// wait waits for run c to end (see run).
func (it *interp) wait(ctx context.Context, c *interpCall) interpResult {
	select {
	case d := <-c.done:
		return interpResult{done: d}
	case <-it.proc.Done():
		select {
		case d := <-c.done:
			return interpResult{done: d}
		default:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		st, err := it.proc.Wait(wctx)
		if err != nil {
			st.ExitCode = -1
		}
		return interpResult{exited: true, status: st}
	case <-it.broken:
		it.kill(ctx)
		return interpResult{broken: it.brokenErr}
	case <-ctx.Done():
		select {
		case d := <-c.done:
			return interpResult{done: d}
		default:
		}
		it.kill(ctx)
		return interpResult{killed: true}
	}
}

// kill kills the interpreter's process tree, with a context that outlives
// a cancelled ctx.
func (it *interp) kill(ctx context.Context) {
	kctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
	defer cancel()
	_ = it.proc.Kill(kctx)
	it.proc.Close()
}

// close ends the interpreter by closing its stdin (it exits on EOF); the
// sandbox's removal takes care of anything it left behind.
func (it *interp) close() { it.proc.Close() }
