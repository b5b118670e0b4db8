package docker

import (
	"context"
	"errors"
	"io"
	"strconv"
	"time"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// execWrapper announces the process's PID (inside the container) on the
// first line of stdout, then becomes the real command. The PID is what
// KillTree needs; the docker API only knows the host's PID, which is
// useless when the engine runs in a VM.
var execWrapper = []string{"/bin/sh", "-c", `echo "$$"; exec "$@"`, "mcp-sandbox"}

// startExec starts spec.Cmd behind the PID-announcing wrapper, with its
// output (and stdin, when asked) attached.
func (b *Backend) startExec(ctx context.Context, containerID string, spec backend.ExecSpec, stdin bool) (string, types.HijackedResponse, error) {
	created, err := b.cli.ContainerExecCreate(ctx, containerID, container.ExecOptions{
		Cmd:          append(append([]string{}, execWrapper...), spec.Cmd...),
		Env:          spec.Env,
		WorkingDir:   spec.WorkDir,
		User:         spec.User,
		AttachStdin:  stdin,
		AttachStdout: true,
		AttachStderr: true,
	})
	if err != nil {
		return "", types.HijackedResponse{}, b.wrap("create exec", err)
	}
	hj, err := b.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return "", types.HijackedResponse{}, b.wrap("attach exec", err)
	}
	return created.ID, hj, nil
}

// Exec runs spec.Cmd in the container. When ctx ends first, it kills the
// process tree inside the container and returns ctx.Err().
func (b *Backend) Exec(ctx context.Context, containerID string, spec backend.ExecSpec) (backend.ExecStatus, error) {
	if len(spec.Cmd) == 0 {
		return backend.ExecStatus{}, errors.New("exec: empty command")
	}
	execID, hj, err := b.startExec(ctx, containerID, spec, spec.Stdin != nil)
	if err != nil {
		return backend.ExecStatus{}, err
	}
	defer hj.Close()

	pid := backend.NewPIDWriter(backend.OrDiscard(spec.Stdout))
	stderr := backend.OrDiscard(spec.Stderr)
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(pid, stderr, hj.Reader)
		copied <- err
	}()
	if spec.Stdin != nil {
		go func() {
			_, _ = io.Copy(hj.Conn, spec.Stdin)
			_ = hj.CloseWrite()
		}()
	}

	var status backend.ExecStatus
	select {
	case err := <-copied:
		if err != nil && ctx.Err() == nil {
			return status, b.wrap("read exec output", err)
		}
	case <-ctx.Done():
		status.Killed = true
		// The output stream ends when the last process holding it dies;
		// a process that escaped the kill must not keep us here, nor
		// a stream that a stopped container left open (gVisor).
		grace := 2 * time.Second
		if !b.killExec(ctx, containerID, pid, spec.User) {
			grace = 0
		}
		select {
		case <-copied:
		case <-time.After(grace):
			hj.Close()
			<-copied
		}
	}

	ictx, cancel := cleanupContext(ctx)
	defer cancel()
	for i := 0; ; i++ {
		ins, err := b.cli.ContainerExecInspect(ictx, execID)
		if err != nil {
			return status, b.wrap("inspect exec", err)
		}
		if !ins.Running || i >= 50 {
			status.ExitCode = ins.ExitCode
			if ins.Running {
				status.ExitCode = -1
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if status.Killed {
		return status, ctx.Err()
	}
	return status, nil
}

// killExec kills the process tree of an exec whose PID was announced, with
// a context that outlives the cancelled one. It reports whether the kill
// could be started (not when the container has stopped).
func (b *Backend) killExec(ctx context.Context, containerID string, pid *backend.PIDWriter, user string) bool {
	select {
	case <-pid.Ready():
	case <-time.After(2 * time.Second):
	}
	p := pid.PID()
	if p <= 1 {
		b.log.Warn("exec cancelled before it announced its pid; cannot kill its tree", "container", containerID)
		return true
	}
	kctx, cancel := cleanupContext(ctx)
	defer cancel()
	if err := b.KillTree(kctx, containerID, p, user); err != nil {
		b.log.Warn("kill process tree", "container", containerID, "pid", p, "err", err)
		return false
	}
	return true
}

// KillTree kills process pid inside the container and everything it started.
func (b *Backend) KillTree(ctx context.Context, containerID string, pid int, user string) error {
	podman, err := b.isPodman(ctx)
	if err != nil {
		return err
	}
	created, err := b.cli.ContainerExecCreate(ctx, containerID, container.ExecOptions{
		Cmd:  []string{"/bin/sh", "-c", backend.KillTreeScript, "mcp-sandbox-kill", strconv.Itoa(pid)},
		User: user,
		// Podman refuses to attach an exec that has no stream; Docker's
		// hijacked connection ends with the exec only without them.
		AttachStdout: podman, AttachStderr: podman,
	})
	if err != nil {
		return b.wrap("create kill exec", err)
	}
	hj, err := b.cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		return b.wrap("attach kill exec", err)
	}
	defer hj.Close()
	_, _ = io.Copy(io.Discard, hj.Reader)
	return nil
}

// cleanupContext returns a context for clean-up work that must happen even
// though ctx was cancelled, bounded so it cannot hang.
func cleanupContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), 15*time.Second)
}
