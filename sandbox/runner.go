package sandbox

import (
	"context"
	"errors"
	"sync"
)

// residentRunner is a long-lived interpreter inside a sandbox that run_code
// talks to instead of starting a process per call.
type residentRunner interface {
	close()
}

// runnerSlot is what a sandbox keeps for one runner kind (python, node,
// shell): the interpreter, if one is running, and whether runners work in
// this sandbox at all. Calls take the slot one at a time, as a notebook
// runs one cell at a time.
type runnerSlot struct {
	lock callLock // held by the call in progress

	mu  sync.Mutex
	it  *interp
	bad string // why an interpreter cannot run here; calls fall back to exec
	// ran is set once the interpreter ran code: losing it loses state.
	ran bool
	// lost: a cancelled call lost the interpreter's state, and no result
	// has said so yet.
	lost bool
}

func newRunnerSlot() *runnerSlot { return &runnerSlot{} }

// acquire takes the slot for holder, or gives up when ctx ends; waiting
// hears what a call that must wait waits for (see callLock).
func (s *runnerSlot) acquire(ctx context.Context, holder string, waiting func(string)) error {
	return s.lock.acquire(ctx, holder, waiting)
}

func (s *runnerSlot) release() { s.lock.release() }

// slotState is what a runnerSlot holds under its lock, as one value.
type slotState struct {
	it   *interp
	bad  string
	ran  bool
	lost bool
}

// state returns the slot's state at one moment.
func (s *runnerSlot) state() slotState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slotState{it: s.it, bad: s.bad, ran: s.ran, lost: s.lost}
}

// set replaces the slot's interpreter.
func (s *runnerSlot) set(it *interp, ran bool) {
	s.mu.Lock()
	s.it, s.ran = it, ran
	s.mu.Unlock()
}

// markRan records that the slot's interpreter ran code: losing it now
// loses state.
func (s *runnerSlot) markRan() {
	s.mu.Lock()
	s.ran = true
	s.mu.Unlock()
}

// setLost records whether a cancelled call lost the interpreter's state
// without a result saying so.
func (s *runnerSlot) setLost(lost bool) {
	s.mu.Lock()
	s.lost = lost
	s.mu.Unlock()
}

// markBad records why no interpreter can run here: calls fall back to
// exec from now on.
func (s *runnerSlot) markBad(why string) {
	s.mu.Lock()
	s.bad = why
	s.mu.Unlock()
}

// close stops the slot's interpreter (the sandbox is being removed).
func (s *runnerSlot) close() {
	s.mu.Lock()
	it := s.it
	s.it = nil
	s.mu.Unlock()
	if it != nil {
		it.close()
	}
}

// errSandboxRemoving is returned when a call races the sandbox's removal.
var errSandboxRemoving = errors.New("sandbox is being removed")

// slot returns sb's slot for a runner kind, making it if needed.
func (sb *Sandbox) slot(kind string) (*runnerSlot, error) {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if sb.removing {
		return nil, errSandboxRemoving
	}
	if sb.runners == nil {
		sb.runners = map[string]residentRunner{}
	}
	r, ok := sb.runners[kind].(*runnerSlot)
	if !ok {
		r = newRunnerSlot()
		sb.runners[kind] = r
	}
	return r, nil
}
