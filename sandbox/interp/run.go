package interp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// RunRequest is one run_code call in a Slot's interpreter.
type RunRequest struct {
	Host  Host
	Code  string
	Reset bool // start a fresh interpreter
	// Timeout bounds the run (not the interpreter's start).
	Timeout time.Duration
	// Stdout and Stderr get the run's output, and the notes on how it
	// ended; the engine's writers keep it within the output budget.
	Stdout, Stderr io.Writer
	ImageBytes     int // limits.image_bytes: the figure bytes the run may keep
	MemoryMB       int // the sandbox's memory limit, for the OOM note
	// TimeoutHint returns what the timeout note adds (advice for a
	// server, say); nil adds nothing.
	TimeoutHint func() string
}

// RunResult is how a run ended. Output is in the request's writers.
type RunResult struct {
	// Handled is false when no interpreter can run in the sandbox: the
	// caller runs the code with one exec, which gives the same answer
	// more slowly, and adds Fallback (when set) to its stderr.
	Handled  bool
	Fallback string
	// StateLost: earlier variables are gone (meaningful either way).
	StateLost bool
	ExitCode  int
	TimedOut  bool
	OOMKilled bool
	// Result is the value of the code's trailing expression, whole.
	Result  string
	Figures [][]byte // PNG images
	// FiguresDropped: figures were not returned (the result is cut).
	FiguresDropped bool
	// Duration is the run's round trip: from the run frame leaving the
	// server to the done frame coming back through the agent.
	Duration time.Duration
	// Interpreter is the part of Duration the interpreter says it spent
	// on the run (0 when it does not say).
	Interpreter time.Duration
	// Release gives the figures' bytes back to the budget, once they are
	// sent or dropped (nil: nothing to give back); later calls do nothing.
	Release func()
}

// exitTimedOut is the exit code of a run killed on timeout (as
// coreutils' timeout reports it).
const exitTimedOut = 124

// maxBreaks is how many interpreters in a row may break the protocol
// before a sandbox runs code with one exec per call.
const maxBreaks = 3

// Run runs req.Code in the slot's interpreter, starting one if there is
// none, or a fresh one after a reset or when the last one ended.
func (s *Slot) Run(ctx context.Context, req RunRequest) (res RunResult, err error) {
	// Starting and running end when the container stops: under gVisor the
	// attached stream may never close then.
	bctx, unbind := req.Host.Bound(ctx)
	defer unbind()
	st := s.state()
	// A call cancelled earlier lost the state, and its result, which
	// would have said so, never reached the client: the next result that
	// does says it. So does the call after an interpreter broke, which
	// starts a fresh one.
	res.StateLost = st.lost
	defer func() {
		if err == nil {
			s.setLost(false)
		}
	}()
	if st.bad != "" && st.breaks > 0 && req.Reset {
		// A reset gives a sandbox whose interpreters broke another try.
		s.forgive()
		st = s.state()
	}
	if st.bad != "" {
		res.Fallback = fallbackNote(st)
		return res, nil
	}
	res.StateLost = res.StateLost || st.breaks > 0 && st.it == nil
	it, err := s.ready(ctx, bctx, req, &res)
	if !res.Handled {
		res.Fallback = fallbackNote(s.state())
	}
	if !res.Handled || err != nil {
		return res, err
	}
	return res, s.run(ctx, bctx, it, req, &res)
}

// ready returns the interpreter a run uses: the slot's, or a fresh one
// after a reset or when it ended since the last call (res.StateLost then
// says whether variables were lost). It sets res.Handled unless no
// interpreter can run in the sandbox.
func (s *Slot) ready(ctx, bctx context.Context, req RunRequest, res *RunResult) (*interp, error) {
	st := s.state()
	it := st.it
	if it != nil && (req.Reset || it.gone()) {
		// A reset, or an interpreter that ended since the last call (killed
		// from outside): the variables it held are gone.
		res.StateLost = res.StateLost || st.ran
		if req.Reset && !it.gone() {
			it.kill(ctx)
			s.set(nil, false)
		} else {
			s.drop(it)
		}
		it = nil
	}
	res.Handled = true
	if it != nil {
		return it, nil
	}
	it, err := start(bctx, req.Host, s.kind, s.figures)
	if err == nil {
		s.set(it, false)
		return it, nil
	}
	if stop, ok := req.Host.Stopped(ctx, ctx.Err() == nil); ok {
		return nil, stop.Err
	}
	if errors.Is(err, ErrUnusable) {
		s.log.Info("resident interpreter unavailable; running code with one exec per call", "kind", s.kind, "why", err)
		s.markBad(err.Error())
		res.Handled = false
		return nil, nil
	}
	if ctx.Err() != nil {
		return nil, fmt.Errorf("cancelled: %w", ctx.Err())
	}
	return nil, req.Host.Gone(ctx, err)
}

// run runs req.Code in it with req.Timeout and fills in res from how the
// run ended.
func (s *Slot) run(ctx, bctx context.Context, it *interp, req RunRequest, res *RunResult) error {
	tctx, cancel := context.WithTimeout(bctx, req.Timeout)
	defer cancel()
	begun := time.Now()
	e := it.run(tctx, req.Code, req.Stdout, req.Stderr, req.ImageBytes)
	res.Duration = time.Since(begun)
	s.markRan()
	// Only a cancel or a stopped container is a kill no timeout explains.
	suspect := e.exited || e.killed && ctx.Err() == nil && !errors.Is(tctx.Err(), context.DeadlineExceeded)
	kept, err := s.end(ctx, it, req, e, suspect, res)
	if !kept {
		s.figures.give(e.figs.reserved)
	}
	return err
}

// end fills in res from how run e ended; kept says the run's figures
// (and their share of the budget) went to res.
func (s *Slot) end(ctx context.Context, it *interp, req RunRequest, e ending, suspect bool, res *RunResult) (kept bool, err error) {
	if stop, ok := req.Host.Stopped(ctx, suspect); ok {
		s.drop(it)
		res.StateLost = true
		if !stop.OOM {
			return false, stop.Err
		}
		res.ExitCode, res.OOMKilled = 137, true
		_, _ = io.WriteString(req.Stderr, stop.Note)
		return false, nil
	}
	switch {
	case e.killed:
		if err := s.killed(ctx, req, res); err != nil {
			return false, err
		}
	case e.exited:
		if err := s.exited(ctx, it, req, e, res); err != nil {
			return false, err
		}
	case e.broken != nil:
		s.broken(req, e, res)
	default:
		res.ExitCode = e.done.ExitCode
		res.Interpreter = time.Duration(e.done.TookUS) * time.Microsecond
		s.broke(true)
		if e.done.Result != nil {
			res.Result = *e.done.Result
		}
		res.Figures, res.Release, kept = e.figs.figures, s.releaseOnce(e.figs.reserved), true
	}
	figuresDropped(req.Stderr, e.figs, req.ImageBytes)
	res.FiguresDropped = e.figs.dropped > 0
	return kept, nil
}

// killed is a run whose interpreter was killed: on the caller's cancel
// (an error; the next result says the state was lost) or on timeout (a
// normal result).
func (s *Slot) killed(ctx context.Context, req RunRequest, res *RunResult) error {
	s.set(nil, false)
	res.StateLost = true
	if ctx.Err() != nil {
		s.setLost(true)
		return fmt.Errorf("cancelled: %w", ctx.Err())
	}
	res.TimedOut = true
	res.ExitCode = exitTimedOut
	hint := ""
	if req.TimeoutHint != nil {
		hint = req.TimeoutHint()
	}
	fmt.Fprintf(req.Stderr, "\n[mcp-sandbox: timed out after %s; the interpreter and everything it started were killed, and its variables are gone%s]\n", req.Timeout, hint)
	return nil
}

// exited is a run whose interpreter exited on its own: the code ended
// it, the OOM killer took it, or its container went with it.
func (s *Slot) exited(ctx context.Context, it *interp, req RunRequest, e ending, res *RunResult) error {
	s.drop(it)
	res.StateLost = true
	if err := req.Host.Exited(ctx); err != nil {
		return err
	}
	res.ExitCode = e.status.ExitCode
	if res.ExitCode == 137 && req.Host.OOMKilled(ctx) {
		res.OOMKilled = true
		fmt.Fprintf(req.Stderr, "\n[mcp-sandbox: killed for using more than the sandbox's %d MB of memory; the interpreter's variables are gone]\n", req.MemoryMB)
	} else {
		fmt.Fprintf(req.Stderr, "\n[mcp-sandbox: the interpreter exited with code %d; its variables are gone]\n", res.ExitCode)
	}
	return nil
}

// broken is a run whose interpreter broke the protocol. It may have run
// the code, so running it again with exec could do things twice: the
// failure is reported instead, and the next call starts a fresh
// interpreter (after maxBreaks in a row, exec is used from then on).
func (s *Slot) broken(req RunRequest, e ending, res *RunResult) {
	n := s.broke(false)
	s.log.Warn("resident interpreter broke the protocol", "kind", s.kind, "err", e.broken, "in_a_row", n)
	s.set(nil, false)
	res.StateLost = true
	res.ExitCode = 1
	next := "the next run_code starts a fresh interpreter"
	if n >= maxBreaks {
		s.markBad(fmt.Sprintf("%d interpreters in a row stopped answering properly", n))
		next = "from now on this sandbox runs each run_code in a fresh process, so variables do not persist"
	}
	fmt.Fprintf(req.Stderr, "\n[mcp-sandbox: the interpreter stopped answering properly (%v); it was stopped and its variables are gone; %s; run the code again]\n", e.broken, next)
}

// fallbackNote is what a result says when a sandbox whose interpreter
// broke runs code with one exec per call ("": it never had one).
func fallbackNote(st state) string {
	if st.breaks == 0 {
		return ""
	}
	bad := st.bad
	if len(bad) > 300 {
		bad = bad[:300]
	}
	return fmt.Sprintf("[mcp-sandbox: this sandbox runs each run_code in a fresh process, so variables do not persist: %s]", bad)
}

// releaseOnce returns a function that gives n bytes back to the figure
// budget the first time it is called.
func (s *Slot) releaseOnce(n int) func() {
	var once sync.Once
	return func() { once.Do(func() { s.figures.give(n) }) }
}
