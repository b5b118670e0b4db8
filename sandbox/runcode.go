package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/interp"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/record"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// RunCodeRequest is code to run.
type RunCodeRequest struct {
	Code     string
	Language string // default python (or the sandbox's language)
	// SandboxID names the sandbox to run in; empty: a fresh sandbox is made
	// for this call and removed after it.
	SandboxID string
	// Image is the fresh sandbox's image (sandbox_create's policy); it
	// cannot go with SandboxID.
	Image          string
	TimeoutSeconds int
	// Reset starts a fresh interpreter (resident runners only).
	Reset    bool
	Client   string
	Progress func(backend.PullProgress)
	// Waiting hears, when the call must wait for another in the same
	// sandbox, what it waits for (at once, then every few seconds).
	Waiting func(msg string)
	// Output, if set, hears the output while the code runs.
	Output OutputFunc
}

// RunCodeResult is an ExecResult plus what only code runs have.
type RunCodeResult struct {
	ExecResult
	// Result is the value of a trailing expression, where the language has
	// one and a resident runner evaluated it.
	Result    string `json:"result,omitempty" jsonschema:"Sent in the text content, not here."`
	SandboxID string `json:"sandbox_id"`
	Language  string `json:"language"`
	// StateLost is set when the interpreter had to be restarted (timeout,
	// cancellation, reset) so earlier variables are gone; after a
	// cancelled call, whose result is not delivered, the next result
	// says it.
	StateLost bool     `json:"state_lost,omitempty"`
	Figures   [][]byte `json:"-"` // PNG images the code made (matplotlib)
	// OneShot is set when a fresh sandbox was made and removed for the call.
	OneShot bool `json:"one_shot"`

	// release gives the figures' bytes back to the server's budget.
	release func()
	// fallback: why code ran with one exec where an interpreter broke
	// before (a note for the result).
	fallback string
}

// Release gives the bytes of r's figures back to the server's figure
// budget (interp.Budget): call it once the figures have been sent or dropped.
// Later calls do nothing.
func (r *RunCodeResult) Release() {
	if r.release != nil {
		r.release()
	}
}

// RunCode runs code in a sandbox, or in a fresh one that is removed after.
//
// Python and JavaScript go to the sandbox's resident interpreter (package
// interp), which keeps variables between calls and returns the value of
// a trailing expression and any figures; bash keeps its working directory,
// variables and functions between calls; every other language, and any
// sandbox where an interpreter cannot run, gets one exec per call.
func (e *Engine) RunCode(ctx context.Context, req RunCodeRequest) (RunCodeResult, error) {
	out := req.Output
	if strings.TrimSpace(req.Code) == "" {
		return RunCodeResult{}, invalidErr("code is empty")
	}
	if len(req.Code) > maxCodeBytes {
		return RunCodeResult{}, invalidErr("code is %d bytes, more than %d; copy large programs in with write_file or copy_in", len(req.Code), maxCodeBytes)
	}
	cfg := e.cfg.Current()
	timeout, err := timeoutFor(cfg, req.TimeoutSeconds)
	if err != nil {
		return RunCodeResult{}, err
	}
	var sb *Sandbox
	oneShot := req.SandboxID == ""
	if !oneShot && req.Image != "" {
		return RunCodeResult{}, invalidErr("image is fixed when a sandbox is created; leave image out, or leave sandbox_id out for a fresh sandbox with that image")
	}
	if oneShot {
		sb, err = e.createWaiting(ctx, CreateRequest{Language: req.Language, Image: req.Image, Client: req.Client, Progress: req.Progress, oneShot: true})
		if err != nil {
			return RunCodeResult{}, err
		}
		defer e.removeLater(ctx, sb)
	} else if sb, err = e.Lookup(ctx, req.SandboxID); err != nil {
		return RunCodeResult{}, err
	}
	langName, lang := sb.Language, sb.Lang
	if req.Language != "" {
		if langName, lang, err = resolveLanguage(cfg, req.Language); err != nil {
			return RunCodeResult{}, err
		}
	}
	d := time.Duration(timeout) * time.Second
	var rr RunCodeResult
	handled := false
	switch {
	case runner.Known(lang.Runner):
		rr, handled, err = e.runResident(ctx, sb, lang.Runner, req, d, out)
	case lang.Runner == interp.Shell:
		rr.ExecResult, err = e.runShell(ctx, sb, lang, req, d, out)
		handled = true
	}
	if !handled {
		lost, fallback := rr.StateLost, rr.fallback
		rr = RunCodeResult{StateLost: lost}
		rr.ExecResult, err = e.runFile(ctx, sb, lang.Run, lang.Extension, req.Code, d, out)
		if fallback != "" {
			rr.Stderr += "\n" + fallback + "\n"
		}
	}
	rr.SandboxID, rr.Language, rr.OneShot = sb.ID, langName, oneShot
	note := errNote(err)
	if rr.Result != "" {
		note = strings.TrimSpace("result: " + record.Clip(rr.Result, record.FieldMax) + "\n" + note)
	}
	sb.transcript.add("run_code ("+langName+")", req.Code, &rr.ExecResult, note)
	return rr, err
}

// oneShotWait bounds how long a one-shot run waits for a free slot under
// limits.max_sandboxes.
const oneShotWait = 2 * time.Minute

// createWaiting creates a sandbox for a one-shot run. When max_sandboxes
// is reached it waits for a sandbox to go (one-shot runs end on their own)
// instead of failing, so a burst of one-shot calls queues.
func (e *Engine) createWaiting(ctx context.Context, req CreateRequest) (*Sandbox, error) {
	deadline := time.Now().Add(oneShotWait)
	for {
		freed := e.slotFreed()
		sb, err := e.newSandbox(ctx, req)
		if !errors.Is(err, ErrLimit) || time.Now().After(deadline) {
			return sb, err
		}
		t := time.NewTimer(time.Second) // sandboxes of other servers go unannounced
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("cancelled while waiting for a free sandbox slot: %w", ctx.Err())
		case <-freed:
		case <-t.C:
		}
		t.Stop()
	}
}

// runFile writes code to a file in the workspace and runs the language's
// command on it; the file is removed when the command ends.
func (e *Engine) runFile(ctx context.Context, sb *Sandbox, run []string, ext, code string, timeout time.Duration, out OutputFunc) (ExecResult, error) {
	name := "run-" + newID() + ext
	dir := path.Join(backend.Workspace, ".mcp-sandbox")
	uid, gid := hostcopy.UserIDs(sb.User)
	if err := e.be.CopyTo(ctx, sb.ContainerID, backend.Workspace, hostcopy.FileTar(uid, gid, ".mcp-sandbox/"+name, []byte(code))); err != nil {
		return ExecResult{}, e.containerGone(ctx, sb, err)
	}
	file := path.Join(dir, name)
	argv := make([]string, 0, len(run))
	for _, a := range run {
		argv = append(argv, strings.ReplaceAll(a, "{file}", file))
	}
	// Run the command, then remove the file, keeping the command's status.
	wrapped := append([]string{"/bin/sh", "-c", `f=$1; shift; "$@"; rc=$?; rm -f -- "$f" 2>/dev/null; exit $rc`, "mcp-sandbox-run", file}, argv...)
	res, err := e.run(ctx, sb, runSpec{argv: wrapped, workdir: backend.Workspace, timeout: timeout, out: out})
	if err == nil && res.ExitCode == 127 && len(argv) > 0 && strings.Contains(res.Stderr, argv[0]+": not found") {
		hint := fmt.Sprintf("mcp-sandbox: the image %s has no %s, which the %s language runs; use an image that has it (images.%s, or languages.%s.image, in the config file)\n",
			sb.Image, argv[0], sb.Language, sb.Language, sb.Language)
		res.Stderr += hint
		if out != nil {
			out("stderr", []byte(hint))
		}
	}
	return res, err
}

// residentRunner is what a sandbox keeps running beside its calls (an
// interpreter, the agent, a proxy, previews): its removal closes them.
type residentRunner interface {
	close()
}

// runnerSlot is what a sandbox keeps for one runner kind: the
// interpreter's slot, and the lock that lets its calls in one at a time.
type runnerSlot struct {
	lock callLock
	*interp.Slot
}

func (s *runnerSlot) close() { s.Close() }

// slot returns sb's slot for a runner kind, making it if needed.
func (e *Engine) slot(sb *Sandbox, kind string) (*runnerSlot, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil, fmt.Errorf("%w: sandbox %s is being stopped", ErrNotFound, sb.ID)
	}
	if sb.runners == nil {
		sb.runners = map[string]residentRunner{}
	}
	r, ok := sb.runners[kind].(*runnerSlot)
	if !ok {
		r = &runnerSlot{Slot: interp.NewSlot(kind, e.figures, e.log.With("id", sb.ID))}
		sb.runners[kind] = r
	}
	return r, nil
}

// runResident runs code in sb's resident interpreter of kind (see
// interp.Slot.Run). handled is false when no interpreter can run in sb:
// the caller then runs the code with one exec. res.StateLost is
// meaningful either way.
func (e *Engine) runResident(ctx context.Context, sb *Sandbox, kind string, req RunCodeRequest, timeout time.Duration, out OutputFunc) (res RunCodeResult, handled bool, err error) {
	at, ok := e.be.(backend.Attacher)
	if !ok {
		return res, false, nil
	}
	slot, err := e.slot(sb, kind)
	if err != nil {
		return res, true, err
	}
	if err := slot.lock.acquire(ctx, holderCall, req.Waiting); err != nil {
		return res, true, fmt.Errorf("cancelled while waiting for the previous run: %w", err)
	}
	defer slot.lock.release()
	e.begin(sb)
	defer e.end(sb)
	limits := e.cfg.Current().Limits
	file := e.outputFileFor(ctx, sb, limits.OutputBytes)
	stdout, stderr := newCaptures(limits.OutputBytes, out, file)
	r, err := slot.Run(ctx, interp.RunRequest{
		Host: interpHost{e: e, sb: sb, at: at}, Code: req.Code, Reset: req.Reset, Timeout: timeout,
		Stdout: stdout, Stderr: stderr, ImageBytes: limits.ImageBytes, MemoryMB: sb.Limits.MemoryMB,
		TimeoutHint: func() string { return serverHint(stdout, stderr) },
	})
	file.finish()
	res.StateLost, res.fallback = r.StateLost, r.Fallback
	if !r.Handled {
		return res, false, err
	}
	res.ExitCode, res.TimedOut, res.OOMKilled = r.ExitCode, r.TimedOut, r.OOMKilled
	res.DurationMS = r.Duration.Milliseconds()
	res.Timing = Timing{Sandbox: r.Duration, Interpreter: r.Interpreter}
	res.Result = clipResult(r.Result, limits.OutputBytes)
	res.Figures, res.release = r.Figures, r.Release
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.Truncated() || stderr.Truncated() || r.FiguresDropped
	res.OutputFile = keptFile(file, res.Truncated)
	return res, true, err
}

// clipResult keeps a result within the output budget, as output is kept.
func clipResult(s string, limit int) string {
	c := output.NewCapture(limit, nil)
	_, _ = c.Write([]byte(s))
	return c.String()
}

// warmRunner starts sb's resident interpreter of kind ahead of the first
// call (for pooled sandboxes, so a one-shot run_code finds it running).
func (e *Engine) warmRunner(ctx context.Context, sb *Sandbox, kind string) {
	at, ok := e.be.(backend.Attacher)
	if !ok {
		return
	}
	slot, err := e.slot(sb, kind)
	if err != nil || slot.lock.acquire(ctx, holderInterpUp, nil) != nil {
		return
	}
	defer slot.lock.release()
	slot.Warm(ctx, interpHost{e: e, sb: sb, at: at})
}

// runShell runs bash code with a shell session's state carried between
// calls in the same sandbox (interp.ShellArgv), one call at a time.
func (e *Engine) runShell(ctx context.Context, sb *Sandbox, lang config.Language, req RunCodeRequest, timeout time.Duration, out OutputFunc) (ExecResult, error) {
	slot, err := e.slot(sb, interp.Shell)
	if err != nil {
		return ExecResult{}, err
	}
	if err := slot.lock.acquire(ctx, holderCall, req.Waiting); err != nil {
		return ExecResult{}, fmt.Errorf("cancelled while waiting for the previous run: %w", err)
	}
	defer slot.lock.release()
	return e.runFile(ctx, sb, interp.ShellArgv(req.Reset), lang.Extension, req.Code, timeout, out)
}

// interpHost is the engine's side of sb for its interpreters.
type interpHost struct {
	e  *Engine
	sb *Sandbox
	at backend.Attacher
}

func (h interpHost) Attach(ctx context.Context, argv []string, stdout, stderr io.Writer) (backend.Process, error) {
	return h.at.Attach(ctx, h.sb.ContainerID, backend.ExecSpec{Cmd: argv, Env: h.sb.env, WorkDir: backend.Workspace, User: h.sb.User, Stdout: stdout, Stderr: stderr})
}

func (h interpHost) Bound(ctx context.Context) (context.Context, context.CancelFunc) {
	return h.sb.bound(ctx)
}

func (h interpHost) Stopped(ctx context.Context, suspect bool) (interp.Stop, bool) {
	d := h.e.stoppedDuring(ctx, h.sb, suspect)
	if d == nil {
		return interp.Stop{}, false
	}
	return interp.Stop{OOM: d.exit.OOMKilled, Note: d.note(), Err: goneErr(d)}, true
}

func (h interpHost) Gone(ctx context.Context, err error) error {
	return h.e.containerGone(ctx, h.sb, err)
}

func (h interpHost) Exited(ctx context.Context) error {
	if h.sb.isRemoving() {
		return fmt.Errorf("%w: sandbox %s was stopped while the code ran", ErrNotFound, h.sb.ID)
	}
	if !h.e.containerRunning(ctx, h.sb) {
		return h.e.containerGone(ctx, h.sb, errors.New("the interpreter's container stopped"))
	}
	return nil
}

func (h interpHost) OOMKilled(ctx context.Context) bool { return h.e.oomKilled(ctx, h.sb) }
