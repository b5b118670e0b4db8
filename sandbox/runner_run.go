package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// runResident runs code in sb's resident interpreter of kind, starting it
// if needed. handled is false when no interpreter can run in sb (the
// backend cannot attach, the image lacks the interpreter, or it does not
// speak the protocol): the caller then runs the code with one exec, which
// gives the same answer more slowly. res.StateLost is meaningful either way.
func (e *Engine) runResident(ctx context.Context, sb *Sandbox, kind string, req RunRequest, timeout time.Duration, out OutputFunc) (res RunResult, handled bool, err error) {
	at, ok := e.be.(Attacher)
	if !ok {
		return res, false, nil
	}
	slot, err := sb.slot(kind)
	if err != nil {
		return res, true, fmt.Errorf("%w: sandbox %s is being stopped", ErrNotFound, sb.ID)
	}
	if err := slot.acquire(ctx, holderCall, req.Waiting); err != nil {
		return res, true, fmt.Errorf("cancelled while waiting for the previous run: %w", err)
	}
	defer slot.release()
	// Starting and running end when the container stops: under gVisor the
	// attached stream may never close then.
	bctx, unbind := sb.bound(ctx)
	defer unbind()

	st := slot.state()
	// A call cancelled earlier lost the state, and its result, which
	// would have said so, never reached the client: the next result that
	// does says it.
	res.StateLost = st.lost
	defer func() {
		if err == nil {
			slot.setLost(false)
		}
	}()
	if st.bad != "" {
		return res, false, nil
	}
	it, lost, handled, err := e.readyInterp(ctx, bctx, at, sb, slot, kind, req.Reset, st.it, st.ran)
	res.StateLost = res.StateLost || lost
	if !handled || err != nil {
		return res, handled, err
	}
	call := residentCall{ctx: ctx, sb: sb, slot: slot, it: it, kind: kind, timeout: timeout}
	return res, true, e.runInInterp(bctx, &call, req.Code, out, &res)
}

// residentCall is one run_code call in a resident interpreter: what
// runInInterp sets up and the steps after it read to say how it ended.
type residentCall struct {
	ctx     context.Context // the caller's
	tctx    context.Context // the caller's, bound to the container, with the timeout
	sb      *Sandbox
	slot    *runnerSlot
	it      *interp
	kind    string
	timeout time.Duration
	stdout  *capture
	stderr  *capture
	r       interpResult
}

// runInInterp runs code in c.it with the output budget and c.timeout, and
// fills in res from how the run ended.
func (e *Engine) runInInterp(bctx context.Context, c *residentCall, code string, out OutputFunc, res *RunResult) error {
	e.begin(c.sb)
	defer e.end(c.sb)
	limits := e.cfg.Current().Limits
	c.stdout = newCapture(limits.OutputBytes, streamTo(out, "stdout"))
	c.stderr = newCapture(limits.OutputBytes, streamTo(out, "stderr"))
	tctx, cancel := context.WithTimeout(bctx, c.timeout)
	defer cancel()
	c.tctx = tctx
	start := time.Now()
	c.r = c.it.run(tctx, code, c.stdout, c.stderr, limits.ImageBytes)
	res.DurationMS = time.Since(start).Milliseconds()
	c.slot.markRan()
	kept, err := e.endResident(c, res, limits.OutputBytes, limits.ImageBytes)
	if !kept {
		e.figures.give(c.r.figs.reserved)
	}
	return err
}

// endResident fills in res from how c's run ended; kept says the run's
// figures (and their share of the budget) went to res.
func (e *Engine) endResident(c *residentCall, res *RunResult, outputBytes, imageBytes int) (kept bool, err error) {
	r := c.r
	suspect := r.exited || r.killed && c.ctx.Err() == nil && !errors.Is(c.tctx.Err(), context.DeadlineExceeded)
	if d := e.stoppedDuring(c.ctx, c.sb, suspect); d != nil {
		c.it.close()
		c.slot.set(nil, false)
		res.StateLost = true
		return false, d.result(&res.ExecResult, c.stdout, c.stderr)
	}
	switch {
	case r.killed:
		if err := residentKilled(c, res); err != nil {
			return false, err
		}
	case r.exited:
		if err := e.residentExited(c, res); err != nil {
			return false, err
		}
	case r.broken != nil:
		e.residentBroken(c, res)
	default:
		res.ExitCode = r.done.ExitCode
		if r.done.Result != nil {
			res.Result = clipResult(*r.done.Result, outputBytes)
		}
		res.Figures, res.release, kept = r.figs.figures, e.releaseOnce(r.figs.reserved), true
	}
	figuresDropped(c.stderr, r.figs, imageBytes)
	res.fill(c.stdout, c.stderr)
	res.Truncated = res.Truncated || r.figs.dropped > 0
	return kept, nil
}

// residentKilled is a run whose interpreter the engine killed: on the
// caller's cancel (an error; the next result says the state was lost) or
// on timeout (a normal result).
func residentKilled(c *residentCall, res *RunResult) error {
	c.slot.set(nil, false)
	res.StateLost = true
	if c.ctx.Err() != nil {
		c.slot.setLost(true)
		res.fill(c.stdout, c.stderr)
		return fmt.Errorf("cancelled: %w", c.ctx.Err())
	}
	res.TimedOut = true
	res.ExitCode = exitTimedOut
	fmt.Fprintf(c.stderr, "\n[mcp-sandbox: timed out after %s; the interpreter and everything it started were killed, and its variables are gone%s]\n", c.timeout, serverHint(c.stdout, c.stderr))
	return nil
}

// residentExited is a run whose interpreter exited on its own: the code
// ended it, the OOM killer took it, or its container went with it.
func (e *Engine) residentExited(c *residentCall, res *RunResult) error {
	c.it.close()
	c.slot.set(nil, false)
	res.StateLost = true
	if c.sb.isRemoving() {
		return fmt.Errorf("%w: sandbox %s was stopped while the code ran", ErrNotFound, c.sb.ID)
	}
	if !e.containerRunning(c.ctx, c.sb) {
		return e.containerGone(c.ctx, c.sb, errors.New("the interpreter's container stopped"))
	}
	res.ExitCode = c.r.status.ExitCode
	if res.ExitCode == 137 && e.oomKilled(c.ctx, c.sb) {
		res.OOMKilled = true
		fmt.Fprintf(c.stderr, "\n[mcp-sandbox: killed for using more than the sandbox's %d MB of memory; the interpreter's variables are gone]\n", c.sb.Limits.MemoryMB)
	} else {
		fmt.Fprintf(c.stderr, "\n[mcp-sandbox: the interpreter exited with code %d; its variables are gone]\n", res.ExitCode)
	}
	return nil
}

// residentBroken is a run whose interpreter broke the protocol. It may
// have run the code, so running it again with exec could do things twice:
// the failure is reported instead, and exec is used from now on.
func (e *Engine) residentBroken(c *residentCall, res *RunResult) {
	e.log.Warn("resident interpreter broke the protocol; using exec from now on", "id", c.sb.ID, "kind", c.kind, "err", c.r.broken)
	c.slot.set(nil, false)
	c.slot.markBad(c.r.broken.Error())
	res.StateLost = true
	res.ExitCode = 1
	fmt.Fprintf(c.stderr, "\n[mcp-sandbox: the interpreter stopped answering properly (%v); it was stopped and its variables are gone; run the code again]\n", c.r.broken)
}

// figuresDropped notes in stderr the figures a run dropped, and why.
func figuresDropped(stderr *capture, f figureTally, imageBytes int) {
	if f.dropped == 0 {
		return
	}
	why := fmt.Sprintf("a run returns at most %d figures and limits.image_bytes (%d bytes) of them", maxFigures, imageBytes)
	if f.busy {
		why = "the server's figure budget was in use by other calls"
	}
	fmt.Fprintf(stderr, "\n[mcp-sandbox: %d figure(s) (%d bytes) were not returned: %s]\n", f.dropped, f.droppedBytes, why)
}

// releaseOnce returns a function that gives n bytes back to the figure
// budget the first time it is called.
func (e *Engine) releaseOnce(n int) func() {
	var once sync.Once
	return func() { once.Do(func() { e.figures.give(n) }) }
}

// readyInterp returns the interpreter a run in slot uses: it (the slot's,
// ran says whether it ran code), or a fresh one after a reset or when it
// ended since the last call. lost says variables were lost on the way;
// handled false says no interpreter can run in sb.
func (e *Engine) readyInterp(ctx, bctx context.Context, at Attacher, sb *Sandbox, slot *runnerSlot, kind string, reset bool, it *interp, ran bool) (_ *interp, lost, handled bool, _ error) {
	if it != nil && (reset || it.gone()) {
		// A reset, or an interpreter that ended since the last call (killed
		// from outside): the variables it held are gone.
		lost = ran
		if reset && !it.gone() {
			it.kill(ctx)
		} else {
			it.close()
		}
		it = nil
		slot.set(nil, false)
	}
	if it == nil {
		var err error
		if it, err = startInterp(bctx, at, sb, kind, e.figures); err != nil {
			if d := e.stoppedDuring(ctx, sb, ctx.Err() == nil); d != nil {
				return nil, lost, true, goneErr(d)
			}
			if errors.Is(err, errInterpUnusable) {
				e.log.Info("resident interpreter unavailable; running code with one exec per call", "id", sb.ID, "kind", kind, "why", err)
				slot.markBad(err.Error())
				return nil, lost, false, nil
			}
			if ctx.Err() != nil {
				return nil, lost, true, fmt.Errorf("cancelled: %w", ctx.Err())
			}
			return nil, lost, true, e.containerGone(ctx, sb, err)
		}
		slot.set(it, false)
	}
	return it, lost, true, nil
}

// fill copies captured output into the result.
func (r *RunResult) fill(stdout, stderr *capture) {
	r.Stdout, r.Stderr = stdout.String(), stderr.String()
	r.Truncated = stdout.Truncated() || stderr.Truncated()
}

// clipResult keeps a result within the output budget, as output is kept.
func clipResult(s string, limit int) string {
	c := newCapture(limit, nil)
	_, _ = c.Write([]byte(s))
	return c.String()
}

// warmRunner starts sb's resident interpreter of kind ahead of the first
// call (for pooled sandboxes, so a one-shot run_code finds it running).
func (e *Engine) warmRunner(ctx context.Context, sb *Sandbox, kind string) {
	at, ok := e.be.(Attacher)
	if !ok {
		return
	}
	slot, err := sb.slot(kind)
	if err != nil || slot.acquire(ctx, holderInterpUp, nil) != nil {
		return
	}
	defer slot.release()
	it, err := startInterp(ctx, at, sb, kind, e.figures)
	switch {
	case errors.Is(err, errInterpUnusable):
		slot.markBad(err.Error())
	case err != nil:
		e.log.Debug("warm interpreter", "id", sb.ID, "kind", kind, "err", err)
	default:
		slot.set(it, false)
	}
}
