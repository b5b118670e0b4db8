package interp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// StartTimeout bounds an interpreter's start-up (a cold image under
// gVisor can be slow).
const StartTimeout = 20 * time.Second

// ErrUnusable says an interpreter cannot run in a sandbox (no python3 or
// node in the image, or one that does not speak the protocol): the caller
// falls back to one exec per call.
var ErrUnusable = errors.New("resident interpreter unusable")

// interp is a resident interpreter running in a sandbox, reached over an
// attached exec (see package runner for the protocol).
type interp struct {
	kind  string
	nonce string
	proc  backend.Process
	diag  *buffer // the interpreter's own stderr, for error messages
	ready chan runner.Ready

	brokenOnce sync.Once
	broken     chan struct{}
	brokenErr  error

	nextID int // owned by the slot's caller

	// figures is the server's figure budget; the figures a run keeps
	// are taken from it.
	figures *Budget

	mu   sync.Mutex
	call *interpCall
	// figFor is the run the fig frame being read was admitted for (its
	// payload may end after that run has).
	figFor *interpCall
	// between holds output written while no run was in progress (a
	// background thread or process), for the next run: stdout, stderr.
	between [2]*buffer
}

// betweenBytes bounds the output kept from between runs, per stream.
const betweenBytes = 16 << 10

// interpCall is the run in progress: where its frames go.
type interpCall struct {
	id             int
	stdout, stderr io.Writer
	done           chan runner.Done
	figs           figureTally
	// ended: the run is over; a figure admitted for it that arrives now
	// is dropped (its bytes were given back with the run's).
	ended bool
}

// ending is how a run ended, as far as the interpreter is concerned.
type ending struct {
	done runner.Done
	// figs: what a run that ended with done kept; its reserved bytes
	// are the caller's to give back.
	figs figureTally
	// exited: the interpreter ended during the run (status says how).
	exited bool
	status backend.ExecStatus
	// killed: ctx ended first and the interpreter's tree was killed.
	killed bool
	// broken: the interpreter stopped speaking the protocol.
	broken error
}

// newInterp returns an interpreter of kind not started yet, whose
// figures are taken from figures.
func newInterp(kind string, figures *Budget) *interp {
	return &interp{
		kind: kind, nonce: runner.NewNonce(), diag: newBuffer(4096),
		ready: make(chan runner.Ready, 1), broken: make(chan struct{}), figures: figures,
	}
}

// decoder reads the interpreter's frames.
func (it *interp) decoder() *runner.Decoder {
	return runner.NewDecoder(it.nonce, it.onFrame, it.fail).Gate(it.gate)
}

// start starts an interpreter of kind in host's sandbox and waits until
// it is ready. An error wrapping ErrUnusable means the sandbox cannot run
// one; other errors are the backend's or ctx's.
func start(ctx context.Context, host Host, kind string, figures *Budget) (*interp, error) {
	it := newInterp(kind, figures)
	proc, err := host.Attach(ctx, runner.Argv(kind), it.decoder(), it.diag)
	if err != nil {
		return nil, err
	}
	it.proc = proc
	// A write error means the process is already gone; Done says so below.
	_, _ = proc.Write(runner.Boot(kind, it.nonce))
	t := time.NewTimer(StartTimeout)
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
		return nil, fmt.Errorf("%w: %s interpreter exited with code %d at start: %s", ErrUnusable, kind, st.ExitCode, it.diagText())
	case <-it.broken:
		it.kill(ctx)
		return nil, fmt.Errorf("%w: %s interpreter: %v", ErrUnusable, kind, it.brokenErr)
	case <-t.C:
		it.kill(ctx)
		return nil, fmt.Errorf("%w: %s interpreter did not start within %s: %s", ErrUnusable, kind, StartTimeout, it.diagText())
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
	if f.Kind == runner.KindReady {
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
		it.keepBetween(f)
		it.mu.Unlock()
		return
	}
	if f.Kind == runner.KindDone {
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

// keepBetween keeps output written between runs (a background thread or
// process) for the next run. Called with it.mu held.
func (it *interp) keepBetween(f runner.Frame) {
	k := -1
	switch f.Kind {
	case runner.KindOut:
		k = 0
	case runner.KindErr:
		k = 1
	}
	if k < 0 {
		return
	}
	if it.between[k] == nil {
		it.between[k] = newBuffer(betweenBytes)
	}
	_, _ = it.between[k].Write(f.Payload)
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
// caller gives their bytes back to the server's budget (figs.reserved).
func (it *interp) run(ctx context.Context, code string, stdout, stderr io.Writer, imageBytes int) ending {
	it.nextID++
	c := &interpCall{id: it.nextID, stdout: stdout, stderr: stderr, done: make(chan runner.Done, 1), figs: figureTally{left: imageBytes}}
	it.mu.Lock()
	it.call = c
	earlier := it.between
	it.between = [2]*buffer{}
	it.mu.Unlock()
	for k, w := range []io.Writer{stdout, stderr} {
		if b := earlier[k]; b != nil {
			s := b.String()
			if s != "" && s[len(s)-1] != '\n' {
				s += "\n"
			}
			_, _ = io.WriteString(w, "[written after the previous call had ended]\n"+s+"[this call]\n")
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
func (it *interp) wait(ctx context.Context, c *interpCall) ending {
	select {
	case d := <-c.done:
		// Frames are decoded in order: a break before this done (a bad
		// frame the run's own code wrote) has closed broken already, and
		// wins over the done that followed it.
		select {
		case <-it.broken:
			it.kill(ctx)
			return ending{broken: it.brokenErr}
		default:
		}
		return ending{done: d}
	case <-it.proc.Done():
		select {
		case d := <-c.done:
			return ending{done: d}
		default:
		}
		wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		st, err := it.proc.Wait(wctx)
		if err != nil {
			st.ExitCode = -1
		}
		return ending{exited: true, status: st}
	case <-it.broken:
		it.kill(ctx)
		return ending{broken: it.brokenErr}
	case <-ctx.Done():
		select {
		case d := <-c.done:
			return ending{done: d}
		default:
		}
		it.kill(ctx)
		return ending{killed: true}
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
