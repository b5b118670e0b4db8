package supervisor

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/childproc"
)

// Options describes the child and how it is supervised.
type Options struct {
	Command string
	Args    []string
	// Env is the child's whole environment; nil means the tray's own.
	Env []string
	// Stdout and Stderr receive the child's output; nil discards it.
	Stdout, Stderr io.Writer
	Log            *slog.Logger

	// MinBackoff is the first wait before a restart (default 1s); each
	// quick exit doubles it up to MaxBackoff (default 1m).
	MinBackoff, MaxBackoff time.Duration
	// StableAfter is how long a run must last for the next restart to
	// wait only MinBackoff again (default 30s).
	StableAfter time.Duration
	// StopTimeout is how long the child has to exit after SIGTERM
	// before it is killed (default 5s).
	StopTimeout time.Duration
	// OnChange, if set, is called with each new status, from the
	// supervisor's goroutine.
	OnChange func(Status)
}

// State is where the child is in its life.
type State string

// The states a Status reports.
const (
	Stopped  State = "stopped"
	Running  State = "running"
	Backoff  State = "waiting to restart"
	Starting State = "starting"
)

// Status is the child's state as the tray shows it.
type Status struct {
	State State
	// PID is the running child's process id.
	PID int
	// Restarts counts the starts after the first.
	Restarts int
	// LastExit says how the previous run ended, if there was one.
	LastExit string
	// NextStart is when a child waiting in Backoff starts again.
	NextStart time.Time
}

// Supervisor runs one child at a time.
type Supervisor struct {
	o Options

	mu     sync.Mutex
	status Status
}

// New returns a supervisor; Run starts it.
func New(o Options) *Supervisor {
	if o.MinBackoff <= 0 {
		o.MinBackoff = time.Second
	}
	if o.MaxBackoff < o.MinBackoff {
		o.MaxBackoff = max(time.Minute, o.MinBackoff)
	}
	if o.StableAfter <= 0 {
		o.StableAfter = 30 * time.Second
	}
	if o.StopTimeout <= 0 {
		o.StopTimeout = 5 * time.Second
	}
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	return &Supervisor{o: o, status: Status{State: Stopped}}
}

// Status returns the child's current state.
func (s *Supervisor) Status() Status {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.status
}

func (s *Supervisor) set(f func(*Status)) {
	s.mu.Lock()
	f(&s.status)
	st := s.status
	s.mu.Unlock()
	if s.o.OnChange != nil {
		s.o.OnChange(st)
	}
}

// Run starts the child and keeps it running until ctx is done; then it
// stops the child and returns once it has exited.
func (s *Supervisor) Run(ctx context.Context) {
	backoff := s.o.MinBackoff
	for starts := 0; ; starts++ {
		s.set(func(st *Status) { st.State, st.PID, st.NextStart = Starting, 0, time.Time{} })
		began := time.Now()
		err := s.runOnce(ctx, starts)
		if ctx.Err() != nil {
			s.set(func(st *Status) { st.State, st.PID = Stopped, 0 })
			return
		}
		if time.Since(began) >= s.o.StableAfter {
			backoff = s.o.MinBackoff
		}
		next := time.Now().Add(backoff)
		s.o.Log.Warn("bundled server exited; restarting", "err", err, "in", backoff)
		s.set(func(st *Status) {
			st.State, st.PID, st.LastExit, st.NextStart = Backoff, 0, describeExit(err), next
		})
		select {
		case <-ctx.Done():
			s.set(func(st *Status) { st.State, st.NextStart = Stopped, time.Time{} })
			return
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, s.o.MaxBackoff)
	}
}

// runOnce runs the child until it exits or ctx is done.
func (s *Supervisor) runOnce(ctx context.Context, starts int) error {
	cmd := exec.CommandContext(ctx, s.o.Command, s.o.Args...)
	childproc.NoWindow(cmd)
	cmd.Env = s.o.Env
	cmd.Stdout, cmd.Stderr = s.o.Stdout, s.o.Stderr
	cmd.Cancel = func() error { return interrupt(cmd.Process) }
	cmd.WaitDelay = s.o.StopTimeout
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return err
	}
	s.o.Log.Info("bundled server started", "pid", cmd.Process.Pid, "cmd", cmd.Args)
	s.set(func(st *Status) { st.State, st.PID, st.Restarts = Running, cmd.Process.Pid, starts })
	return cmd.Wait()
}

// interrupt asks the child to stop cleanly (so it removes its sandboxes)
// with SIGTERM, which, unlike SIGINT, a shell never sets to be ignored in
// the processes it starts in the background. Windows cannot signal another
// process, so there it is killed.
func interrupt(p *os.Process) error {
	if runtime.GOOS == "windows" {
		return p.Kill()
	}
	return p.Signal(syscall.SIGTERM)
}

func describeExit(err error) string {
	var ee *exec.ExitError
	switch {
	case err == nil:
		return "exited with status 0"
	case errors.As(err, &ee):
		return fmt.Sprintf("exited: %v", ee)
	default:
		return fmt.Sprintf("could not start: %v", err)
	}
}
