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
	if err := slot.acquire(ctx); err != nil {
		return res, true, fmt.Errorf("cancelled while waiting for the previous run: %w", err)
	}
	defer slot.release()
	// Starting and running end when the container stops: under gVisor the
	// attached stream may never close then.
	bctx, unbind := sb.bound(ctx)
	defer unbind()

	slot.mu.Lock()
	bad, it, ran := slot.bad, slot.it, slot.ran
	// A call cancelled earlier lost the state, and its result, which
	// would have said so, never reached the client: the next result that
	// does says it.
	res.StateLost = slot.lost
	slot.mu.Unlock()
	defer func() {
		if err == nil {
			slot.mu.Lock()
			slot.lost = false
			slot.mu.Unlock()
		}
	}()
	if bad != "" {
		return res, false, nil
	}
	it, lost, handled, err := e.readyInterp(ctx, bctx, at, sb, slot, kind, req.Reset, it, ran)
	res.StateLost = res.StateLost || lost
	if !handled || err != nil {
		return res, handled, err
	}

	e.begin(sb)
	defer e.end(sb)
	limit := e.cfg.Current().Limits.OutputBytes
	stdout := newCapture(limit, streamTo(out, "stdout"))
	stderr := newCapture(limit, streamTo(out, "stderr"))
	tctx, cancel := context.WithTimeout(bctx, timeout)
	defer cancel()
	start := time.Now()
	r := it.run(tctx, req.Code, stdout, stderr, e.cfg.Current().Limits.ImageBytes)
	kept := false // whether the figures' budget went to res
	defer func() {
		if !kept {
			e.figures.give(r.figs.reserved)
		}
	}()
	res.DurationMS = time.Since(start).Milliseconds()
	slot.mu.Lock()
	slot.ran = true
	slot.mu.Unlock()

	suspect := r.exited || r.killed && ctx.Err() == nil && !errors.Is(tctx.Err(), context.DeadlineExceeded)
	if d := e.stoppedDuring(ctx, sb, suspect); d != nil {
		it.close()
		slot.set(nil, false)
		res.StateLost = true
		err := d.result(&res.ExecResult, stdout, stderr)
		return res, true, err
	}
	switch {
	case r.killed:
		slot.set(nil, false)
		res.StateLost = true
		if ctx.Err() != nil {
			slot.mu.Lock()
			slot.lost = true
			slot.mu.Unlock()
			res.fill(stdout, stderr)
			return res, true, fmt.Errorf("cancelled: %w", ctx.Err())
		}
		res.TimedOut = true
		res.ExitCode = exitTimedOut
		fmt.Fprintf(stderr, "\n[mcp-sandbox: timed out after %s; the interpreter and everything it started were killed, and its variables are gone]\n", timeout)
	case r.exited:
		it.close()
		slot.set(nil, false)
		res.StateLost = true
		if sb.isRemoving() {
			return res, true, fmt.Errorf("%w: sandbox %s was stopped while the code ran", ErrNotFound, sb.ID)
		}
		if !e.containerRunning(ctx, sb) {
			return res, true, e.containerGone(ctx, sb, errors.New("the interpreter's container stopped"))
		}
		res.ExitCode = r.status.ExitCode
		if res.ExitCode == 137 && e.oomKilled(ctx, sb) {
			res.OOMKilled = true
			fmt.Fprintf(stderr, "\n[mcp-sandbox: killed for using more than the sandbox's %d MB of memory; the interpreter's variables are gone]\n", sb.Limits.MemoryMB)
		} else {
			fmt.Fprintf(stderr, "\n[mcp-sandbox: the interpreter exited with code %d; its variables are gone]\n", res.ExitCode)
		}
	case r.broken != nil:
		// It may have run the code, so running it again with exec could
		// do things twice: report the failure instead, and use exec from
		// now on.
		e.log.Warn("resident interpreter broke the protocol; using exec from now on", "id", sb.ID, "kind", kind, "err", r.broken)
		slot.mu.Lock()
		slot.it, slot.ran, slot.bad = nil, false, r.broken.Error()
		slot.mu.Unlock()
		res.StateLost = true
		res.ExitCode = 1
		fmt.Fprintf(stderr, "\n[mcp-sandbox: the interpreter stopped answering properly (%v); it was stopped and its variables are gone; run the code again]\n", r.broken)
	default:
		res.ExitCode = r.done.ExitCode
		if r.done.Result != nil {
			res.Result = clipResult(*r.done.Result, limit)
		}
		res.Figures, res.release, kept = r.figs.figures, e.releaseOnce(r.figs.reserved), true
	}
	figuresDropped(stderr, r.figs, e.cfg.Current().Limits.ImageBytes)
	res.fill(stdout, stderr)
	res.Truncated = res.Truncated || r.figs.dropped > 0
	return res, true, nil
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
				slot.mu.Lock()
				slot.bad = err.Error()
				slot.mu.Unlock()
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

// set replaces the slot's interpreter.
func (s *runnerSlot) set(it *interp, ran bool) {
	s.mu.Lock()
	s.it, s.ran = it, ran
	s.mu.Unlock()
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

// containerRunning reports whether sb's container still runs (an
// interpreter that ended may have ended with its container).
func (e *Engine) containerRunning(ctx context.Context, sb *Sandbox) bool {
	list, err := e.be.List(ctx)
	if err != nil {
		return true // cannot tell; do not claim it is gone
	}
	for _, c := range list {
		if c.ID == sb.ContainerID {
			return c.State == "running"
		}
	}
	return false
}

// warmRunner starts sb's resident interpreter of kind ahead of the first
// call (for pooled sandboxes, so a one-shot run_code finds it running).
func (e *Engine) warmRunner(ctx context.Context, sb *Sandbox, kind string) {
	at, ok := e.be.(Attacher)
	if !ok {
		return
	}
	slot, err := sb.slot(kind)
	if err != nil || slot.acquire(ctx) != nil {
		return
	}
	defer slot.release()
	it, err := startInterp(ctx, at, sb, kind, e.figures)
	switch {
	case errors.Is(err, errInterpUnusable):
		slot.mu.Lock()
		slot.bad = err.Error()
		slot.mu.Unlock()
	case err != nil:
		e.log.Debug("warm interpreter", "id", sb.ID, "kind", kind, "err", err)
	default:
		slot.set(it, false)
	}
}
