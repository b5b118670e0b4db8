package sandbox

import (
	"context"
	"errors"
	"io"
	"sync"
)

// residentRunner is a long-lived interpreter inside a sandbox that run_code
// talks to instead of starting a process per call.
type residentRunner interface {
	close()
}

// Attacher is implemented by backends that can keep a process running with
// its standard streams attached; the engine uses it for resident
// interpreters. A backend without it still runs code, one exec per call.
type Attacher interface {
	// Attach starts spec.Cmd in a running container and returns at once.
	// ctx bounds the set-up only. spec.Stdout and spec.Stderr receive the
	// output from one goroutine until the process ends; spec.Stdin is
	// ignored (write to the Process).
	Attach(ctx context.Context, containerID string, spec ExecSpec) (Process, error)
}

// Process is a process started by an Attacher. Writing to it writes to its
// stdin.
type Process interface {
	io.Writer
	// Done is closed when the process's output has ended (it exited, or
	// Close cut the connection), after the last byte was delivered.
	Done() <-chan struct{}
	// PID is the process's id inside the container (0 if unknown).
	PID(ctx context.Context) int
	// Wait waits for the process to end and returns how it ended.
	Wait(ctx context.Context) (ExecStatus, error)
	// Kill kills the process and everything it started.
	Kill(ctx context.Context) error
	// Close cuts the connection (the process sees EOF on stdin).
	Close() error
}

// runnerSlot is what a sandbox keeps for one runner kind (python, node,
// shell): the interpreter, if one is running, and whether runners work in
// this sandbox at all. Calls take the slot one at a time, as a notebook
// runs one cell at a time.
type runnerSlot struct {
	sem chan struct{} // held by the call in progress

	mu  sync.Mutex
	it  *interp
	bad string // why an interpreter cannot run here; calls fall back to exec
	// ran is set once the interpreter ran code: losing it loses state.
	ran bool
}

func newRunnerSlot() *runnerSlot { return &runnerSlot{sem: make(chan struct{}, 1)} }

// acquire takes the slot, or gives up when ctx ends.
func (s *runnerSlot) acquire(ctx context.Context) error {
	select {
	case s.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *runnerSlot) release() { <-s.sem }

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
