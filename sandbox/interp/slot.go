package interp

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Host is what the interpreters of one sandbox need from the engine.
type Host interface {
	// Attach starts argv in the sandbox (as its user, in its workspace,
	// with its environment) with stdin attached.
	Attach(ctx context.Context, argv []string, stdout, stderr io.Writer) (backend.Process, error)
	// Bound returns a context that also ends when the sandbox's
	// container stops.
	Bound(ctx context.Context) (context.Context, context.CancelFunc)
	// Stopped says, after a start or run ended, whether the sandbox's
	// container stopped under it. suspect: it ended in a way a stopped
	// container explains (only then is the container probed).
	Stopped(ctx context.Context, suspect bool) (Stop, bool)
	// Gone is the error for a start the backend failed: the sandbox is
	// gone, or err.
	Gone(ctx context.Context, err error) error
	// Exited is asked when the interpreter exited on its own: an error
	// when its sandbox is being removed or its container stopped.
	Exited(ctx context.Context) error
	// OOMKilled reports whether the OOM killer struck in the sandbox
	// since it was last asked.
	OOMKilled(ctx context.Context) bool
}

// Stop is the engine's word on a container that stopped under a call.
type Stop struct {
	// OOM: killed for memory, which a run reports as a normal result
	// (exit 137) with Note in its stderr.
	OOM  bool
	Note string
	// Err is the call's error otherwise: the sandbox is gone.
	Err error
}

// Slot is one runner kind's interpreter in one sandbox and all that is
// known about it. Its caller runs one call at a time in it, as a notebook
// runs one cell at a time.
type Slot struct {
	kind    string
	figures *Budget
	log     *slog.Logger

	mu sync.Mutex
	it *interp
	// bad: why an interpreter cannot run here; calls fall back to exec.
	bad string
	// ran: the interpreter ran code, so losing it loses state.
	ran bool
	// lost: a cancelled call lost the interpreter's state, and no result
	// has said so yet.
	lost bool
	// breaks counts the interpreters that broke the protocol since a run
	// last ended properly (see broken).
	breaks int
}

// NewSlot returns the slot of a runner kind (runner.Known) whose runs
// take their figures from figures and log to log.
func NewSlot(kind string, figures *Budget, log *slog.Logger) *Slot {
	return &Slot{kind: kind, figures: figures, log: log}
}

// state is what a Slot holds under its lock, at one moment.
type state struct {
	it     *interp
	bad    string
	ran    bool
	lost   bool
	breaks int
}

func (s *Slot) state() state {
	s.mu.Lock()
	defer s.mu.Unlock()
	return state{it: s.it, bad: s.bad, ran: s.ran, lost: s.lost, breaks: s.breaks}
}

// set replaces the slot's interpreter.
func (s *Slot) set(it *interp, ran bool) {
	s.mu.Lock()
	s.it, s.ran = it, ran
	s.mu.Unlock()
}

// drop stops the slot's interpreter, which lost its state with it.
func (s *Slot) drop(it *interp) {
	it.close()
	s.set(nil, false)
}

func (s *Slot) markRan() {
	s.mu.Lock()
	s.ran = true
	s.mu.Unlock()
}

func (s *Slot) setLost(lost bool) {
	s.mu.Lock()
	s.lost = lost
	s.mu.Unlock()
}

// broke counts an interpreter that broke the protocol (ok false) or a run
// that ended properly (ok true), and returns the breaks in a row.
func (s *Slot) broke(ok bool) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.breaks++
	if ok {
		s.breaks = 0
	}
	return s.breaks
}

// forgive clears what breaks of the protocol marked bad (not a sandbox
// where no interpreter could start at all).
func (s *Slot) forgive() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.breaks > 0 {
		s.bad, s.breaks = "", 0
	}
}

// markBad records why no interpreter can run here: calls fall back to
// exec from now on.
func (s *Slot) markBad(why string) {
	s.mu.Lock()
	s.bad = why
	s.mu.Unlock()
}

// Close stops the slot's interpreter (the sandbox is being removed).
func (s *Slot) Close() {
	s.mu.Lock()
	it := s.it
	s.it = nil
	s.mu.Unlock()
	if it != nil {
		it.close()
	}
}

// Warm starts the slot's interpreter ahead of the first call (for pooled
// sandboxes, so a one-shot run_code finds it running).
func (s *Slot) Warm(ctx context.Context, host Host) {
	it, err := start(ctx, host, s.kind, s.figures)
	switch {
	case errors.Is(err, ErrUnusable):
		s.markBad(err.Error())
	case err != nil:
		s.log.Debug("warm interpreter", "kind", s.kind, "err", err)
	default:
		s.set(it, false)
	}
}
