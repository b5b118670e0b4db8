package kubernetes

import (
	"context"
	"errors"
	"io"
	"sync"
	"time"

	"k8s.io/client-go/tools/remotecommand"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var (
	_ backend.Attacher      = (*Backend)(nil)
	_ backend.AgentOnCreate = (*Backend)(nil)
)

// AgentOnCreate: a sandbox's command agent starts before the engine's
// Create returns (its copy and attach go through the API server: seconds
// under gVisor), so a new sandbox takes commands at once.
func (b *Backend) AgentOnCreate() {}

// closeGrace is how long Close and Kill let a process end on its own (its
// exit code is known only then) before they cut the stream.
const closeGrace = 2 * time.Second

// Attach starts spec.Cmd in the sandbox container with its stdin, stdout
// and stderr attached (an exec stream that stays open) and returns at
// once; ctx bounds only the set-up.
func (b *Backend) Attach(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.Process, error) {
	argv, err := wrapped(spec, "")
	if err != nil {
		return nil, err
	}
	if err := b.checkUser(ctx, containerID, spec.User); err != nil {
		return nil, err
	}
	ex, err := b.executor(containerID, argv, true)
	if err != nil {
		return nil, err
	}
	pr, pw := io.Pipe()
	out := newOutput(spec.Stdout, spec.Stderr)
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	p := &attached{
		b: b, containerID: containerID, stdin: pw, out: out, cancel: cancel,
		pid:  backend.NewPIDWriter(out.stdout()),
		done: make(chan struct{}),
	}
	go func() {
		// Owned by p: it ends when the process exits or Close or Kill cut
		// the stream.
		defer close(p.done)
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: pr, Stdout: p.pid, Stderr: out.stderr()})
		pr.CloseWithError(io.ErrClosedPipe)
		p.status, p.err = exitStatus(err)
		if sctx.Err() != nil {
			p.status, p.err = backend.ExecStatus{ExitCode: -1}, nil
		}
	}()
	return p, nil
}

// attached is a process started by Attach.
type attached struct {
	b           *Backend
	containerID string
	stdin       *io.PipeWriter
	out         *output
	pid         *backend.PIDWriter
	cancel      context.CancelFunc
	done        chan struct{}

	status backend.ExecStatus // set before done closes
	err    error

	writeMu   sync.Mutex
	closeOnce sync.Once
}

// Write writes to the process's stdin.
func (p *attached) Write(b []byte) (int, error) {
	p.writeMu.Lock()
	defer p.writeMu.Unlock()
	return p.stdin.Write(b)
}

// Done is closed when the process's output has ended.
func (p *attached) Done() <-chan struct{} { return p.done }

// PID waits (at most until ctx ends) for the PID the wrapper announces.
func (p *attached) PID(ctx context.Context) int { return p.pid.WaitPID(ctx, p.done) }

// Wait waits for the process to end and returns its exit code (-1 when
// Close or Kill cut the stream before it ended).
func (p *attached) Wait(ctx context.Context) (backend.ExecStatus, error) {
	select {
	case <-p.done:
		return p.status, p.b.wrap("attached process in "+p.containerID, p.err)
	case <-ctx.Done():
		return backend.ExecStatus{}, ctx.Err()
	}
}

// Kill kills the process and everything it started, then waits briefly for
// its output to end.
func (p *attached) Kill(ctx context.Context) error {
	pid := p.PID(ctx)
	if pid <= 1 {
		p.cut()
		return errors.New("kill: the process never announced its pid")
	}
	err := p.b.KillTree(ctx, p.containerID, pid)
	grace := closeGrace
	if err != nil {
		grace = 0
	}
	select {
	case <-p.done:
	case <-time.After(grace):
		p.cut()
	}
	return err
}

// Close closes the process's stdin and drops its further output; the
// stream is cut if the process has not ended closeGrace later.
func (p *attached) Close() error {
	p.closeOnce.Do(func() {
		p.out.close()
		p.stdin.Close()
		go func() {
			select {
			case <-p.done:
			case <-time.After(closeGrace):
				p.cancel()
			}
		}()
	})
	return nil
}

// cut ends the stream at once.
func (p *attached) cut() {
	p.out.close()
	p.stdin.CloseWithError(io.ErrClosedPipe)
	p.cancel()
	<-p.done
}
