package docker

import (
	"context"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// WaitExit waits until the container is no longer running (Docker's wait
// API with the not-running condition: one long request, not a poll) and
// then reads how it ended from its state. A container that is gone counts
// as ended, with Removed set.
func (b *Backend) WaitExit(ctx context.Context, containerID string) (backend.ContainerExit, error) {
	waitC, errC := b.cli.ContainerWait(ctx, containerID, container.WaitConditionNotRunning)
	var code int
	select {
	case w := <-waitC:
		code = int(w.StatusCode)
	case err := <-errC:
		switch {
		case cerrdefs.IsNotFound(err):
			return backend.ContainerExit{ExitCode: -1, Removed: true}, nil
		case ctx.Err() != nil:
			return backend.ContainerExit{}, ctx.Err()
		}
		return backend.ContainerExit{}, b.wrap("wait for container", err)
	}
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	switch {
	case cerrdefs.IsNotFound(err):
		return backend.ContainerExit{ExitCode: code, Removed: true}, nil
	case err != nil:
		if ctx.Err() != nil {
			return backend.ContainerExit{}, ctx.Err()
		}
		// It has stopped; only the detail is missing.
		b.log.Debug("inspect stopped container", "container", containerID, "err", err)
		return backend.ContainerExit{ExitCode: code}, nil
	}
	exit := backend.ContainerExit{ExitCode: code}
	if ins.State != nil {
		exit.ExitCode, exit.OOMKilled = ins.State.ExitCode, ins.State.OOMKilled
	}
	if ins.HostConfig != nil {
		exit.Runtime = ins.HostConfig.Runtime
	}
	if exit.ExitCode == 137 && !exit.OOMKilled {
		exit.OOMKilled = b.lateOOM(ctx, containerID)
	}
	return exit, nil
}

// oomGrace bounds how long a container killed by SIGKILL is looked at
// again for the engine's OOM flag: the engine learns of an OOM kill from
// an event of its own, which can come after the exit (seen under gVisor,
// where the OOM killer takes the whole container).
const (
	oomGrace = time.Second
	oomPoll  = 100 * time.Millisecond
)

// lateOOM inspects the stopped container until its OOM flag is set or
// oomGrace has passed.
//
// The flag is the engine's "oom" event, recorded: the engine emits the
// event and sets the flag when containerd reports the task's OOM, and
// under gVisor that report can follow the exit (seen in CI). Watching the
// events stream in the death watcher instead was tried, and is not done,
// though the event does come under runsc (in every probe here it came
// before the die event, for a memory bomb and for a full tmpfs workspace):
//
//   - an event that follows the exit must still be waited for, bounded, as
//     here;
//   - a stream opened when the sandbox starts also reports, under runc, a
//     process killed for memory earlier in a container that lived on: a
//     later `docker kill` would then read as an OOM kill, unless each
//     event's time were matched with the container's FinishedAt;
//   - Podman sends no oom event for a process in a container, so the flag
//     must be read there anyway;
//   - and it costs a second long request per sandbox.
func (b *Backend) lateOOM(ctx context.Context, containerID string) bool {
	deadline := time.Now().Add(oomGrace)
	for time.Now().Before(deadline) {
		t := time.NewTimer(oomPoll)
		select {
		case <-ctx.Done():
			t.Stop()
			return false
		case <-t.C:
		}
		ins, err := b.cli.ContainerInspect(ctx, containerID)
		if err != nil || ins.State == nil {
			return false
		}
		if ins.State.OOMKilled {
			return true
		}
	}
	return false
}
