package fake

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// process is a process started by Attach.
type process struct {
	pid    int
	stdin  *io.PipeWriter
	kill   context.CancelFunc
	done   chan struct{}
	mu     sync.Mutex
	status backend.ExecStatus
}

// Attach starts spec.Cmd in a running container with its stdin fed by
// writes to the returned Process.
func (b *Backend) Attach(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.Process, error) {
	if err := b.enter(ctx, OpAttach); err != nil {
		return nil, err
	}
	if len(spec.Cmd) == 0 {
		return nil, errors.New("attach: empty command")
	}
	c, err := b.get(containerID)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	c.pids++
	pid := c.pids
	b.mu.Unlock()
	pr, pw := io.Pipe()
	pctx, kill := context.WithCancel(context.WithoutCancel(ctx))
	p := &process{pid: pid, stdin: pw, kill: kill, done: make(chan struct{})}
	code := b.start(pctx, c, spec, pr)
	go func() {
		n := <-code
		_ = pr.Close()
		p.mu.Lock()
		if n < 0 {
			p.status = backend.ExecStatus{ExitCode: 137, Killed: true}
		} else {
			p.status = backend.ExecStatus{ExitCode: n}
		}
		p.mu.Unlock()
		close(p.done)
	}()
	return p, nil
}

func (p *process) Write(b []byte) (int, error) { return p.stdin.Write(b) }
func (p *process) Done() <-chan struct{}       { return p.done }
func (p *process) PID(context.Context) int     { return p.pid }
func (p *process) Close() error                { return p.stdin.Close() }

func (p *process) Wait(ctx context.Context) (backend.ExecStatus, error) {
	select {
	case <-p.done:
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.status, nil
	case <-ctx.Done():
		return backend.ExecStatus{}, ctx.Err()
	}
}

func (p *process) Kill(context.Context) error {
	p.kill()
	return nil
}
