package docker

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var _ backend.Attacher = (*Backend)(nil)

// Attach starts spec.Cmd in the container with its stdin, stdout and stderr
// attached and returns at once; the process keeps running after ctx ends
// (ctx bounds only the set-up). spec.Stdout and spec.Stderr receive the
// output from one goroutine, which ends when the process does;
// spec.Stdin is ignored: write to the returned process instead.
func (b *Backend) Attach(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.Process, error) {
	if len(spec.Cmd) == 0 {
		return nil, errors.New("attach: empty command")
	}
	execID, hj, err := b.startExec(ctx, containerID, spec, true)
	if err != nil {
		return nil, err
	}
	p := &attached{
		b: b, containerID: containerID, execID: execID, user: spec.User, hj: hj,
		pid:  backend.NewPIDWriter(backend.OrDiscard(spec.Stdout)),
		done: make(chan struct{}),
	}
	stderr := backend.OrDiscard(spec.Stderr)
	go func() {
		// Owned by p: it ends when the process exits or Close cuts the
		// connection.
		defer close(p.done)
		_, _ = stdcopy.StdCopy(p.pid, stderr, hj.Reader)
	}()
	return p, nil
}

// attached is a process started by Attach.
type attached struct {
	b           *Backend
	containerID string
	execID      string
	user        string
	hj          types.HijackedResponse
	pid         *backend.PIDWriter
	done        chan struct{}

	writeMu   sync.Mutex
	closeOnce sync.Once
}

// Write writes to the process's stdin.
func (p *attached) Write(b []byte) (int, error) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	return p.hj.Conn.Write(b)
}

// Done is closed when the process's output has ended.
func (p *attached) Done() <-chan struct{} { return p.done }

// PID waits (at most until ctx ends) for the PID the exec wrapper
// announces.
func (p *attached) PID(ctx context.Context) int { return p.pid.WaitPID(ctx, p.done) }

// Wait waits for the process to end and returns its exit code.
func (p *attached) Wait(ctx context.Context) (backend.ExecStatus, error) {
	select {
	case <-p.done:
	case <-ctx.Done():
		return backend.ExecStatus{}, ctx.Err()
	}
	for i := 0; ; i++ {
		ins, err := p.b.cli.ContainerExecInspect(ctx, p.execID)
		if err != nil {
			return backend.ExecStatus{}, p.b.wrap("inspect exec", err)
		}
		if !ins.Running {
			return backend.ExecStatus{ExitCode: ins.ExitCode}, nil
		}
		if i >= 50 {
			return backend.ExecStatus{ExitCode: -1}, nil
		}
		select {
		case <-ctx.Done():
			return backend.ExecStatus{}, ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Kill kills the process and everything it started, then waits briefly for
// its output to end.
func (p *attached) Kill(ctx context.Context) error {
	pid := p.PID(ctx)
	if pid <= 1 {
		p.Close()
		return errors.New("kill: the process never announced its pid")
	}
	err := p.b.KillTree(ctx, p.containerID, pid, p.user)
	grace := 2 * time.Second
	if err != nil {
		// The container has stopped (or cannot be reached): its stream
		// may never end on its own (gVisor).
		grace = 0
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		p.Close()
	}
	return err
}

// Close cuts the connection: the process sees EOF on stdin, and its output
// is no longer read.
func (p *attached) Close() error {
	p.closeOnce.Do(func() { p.hj.Close() })
	return nil
}
