package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
)

// A sandbox's container can stop on its own: killed for memory (under
// gVisor the OOM killer takes the whole container, not one process), killed
// from outside (`docker kill`), or crashed. The engine watches each of its
// sandboxes with one Backend.WaitExit, shared by every call in it: when the
// container stops, the calls waiting on processes inside end at once
// (their context is cancelled with a *diedError as its cause), and later
// calls on the sandbox's id are told what happened.
//
// Every "did the container die?" check of a call lives in this file, and
// goes through one entry point: stoppedDuring, which a call asks when it
// ended in a way a stopped container explains (it probes the container,
// then awaits the watcher's word on why). Around it: containerGone turns
// a failed engine call into that answer (or into ErrNotFound for a
// container removed from outside); containerRunning and answers are the
// probes; oomKilled asks whether the OOM killer took a process in a
// container that still runs (under runc it kills one process, not the
// container); diedError.result and oomResult put the answer in a result.

// diedError is the cause of a call's end when its sandbox's container
// stopped.
type diedError struct {
	id       string
	memoryMB int
	pids     int
	exit     backend.ContainerExit
	at       time.Time
}

func (d *diedError) Error() string {
	return fmt.Sprintf("sandbox %s %s at %s", d.id, d.what(), d.at.Format(time.TimeOnly))
}

// what says how the container ended, in words.
func (d *diedError) what() string {
	switch {
	case d.exit.OOMKilled:
		return fmt.Sprintf("was killed for using more than its %d MB of memory", d.memoryMB)
	case d.exit.Removed:
		return "was removed from outside (the tray, `mcp-sandbox stop`, docker rm)"
	case d.exit.ExitCode == 137 && d.exit.Runtime == "runsc":
		// gVisor's own memory accounting can end the whole sandbox with
		// SIGKILL without the engine's OOM flag: say what is likely.
		return fmt.Sprintf("was killed (SIGKILL): under gVisor most likely for using more than its %d MB of memory (the engine does not always say so), else from outside (docker kill)", d.memoryMB)
	case d.exit.ExitCode == 2 && d.exit.Runtime == "runsc":
		// gVisor (runsc on its ptrace platform) runs the sandbox's
		// processes on host threads in the container's pids cgroup, and
		// does not enforce the limit itself: when processes (a fork bomb)
		// fill it, gVisor cannot start a thread and exits with code 2.
		return fmt.Sprintf("stopped: gVisor exited with code 2, which it does when it cannot start a thread: most likely its processes reached the sandbox's pids limit (%d; a fork bomb ends a gVisor sandbox, where under runc only the fork fails)", d.pids)
	case d.exit.ExitCode == 137:
		return "was killed from outside (docker kill, or the engine stopped it)"
	case d.exit.ExitCode >= 0:
		return fmt.Sprintf("stopped: its container exited with code %d", d.exit.ExitCode)
	}
	return "stopped: its container is no longer running"
}

// Unwrap makes a dead sandbox one that is not found.
func (d *diedError) Unwrap() error { return ErrNotFound }

// errRemoved is the cause with which a sandbox's life ends when the engine
// removed its container itself (sandbox_stop, expiry, Close).
var errRemoved = errors.New("the sandbox was removed")

// removed ends sb's life once its container is gone (or given up on), so
// that nothing still waits on it: under gVisor an exec's stream can
// outlive its removed container, and an agent start would wait for it
// until its own bound, holding Close as long.
func (sb *Sandbox) removed() {
	sb.mu.Lock()
	kill := sb.kill
	sb.mu.Unlock()
	if kill != nil {
		kill(errRemoved)
	}
}

// life returns the context that ends when sb's container stops, with a
// *diedError as its cause, or errRemoved when the engine removed it.
func (sb *Sandbox) life() context.Context {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return sb.alive
}

// died returns why sb's container stopped, or nil while it runs.
func (sb *Sandbox) died() *diedError {
	sb.mu.Lock()
	alive := sb.alive
	sb.mu.Unlock()
	if alive == nil {
		return nil
	}
	var d *diedError
	if errors.As(context.Cause(alive), &d) {
		return d
	}
	return nil
}

// bound returns a context that ends when ctx does or when sb's container
// stops, whichever comes first; context.Cause tells which.
func (sb *Sandbox) bound(ctx context.Context) (context.Context, context.CancelFunc) {
	alive := sb.life()
	if alive == nil {
		return context.WithCancel(ctx)
	}
	c, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(alive, func() { cancel(context.Cause(alive)) })
	return c, func() {
		stop()
		cancel(context.Canceled)
	}
}

// watch starts the goroutine that waits for sb's container to stop. It is
// called once, before sb is published in e.boxes; forget stops it.
func (e *Engine) watch(ctx context.Context, sb *Sandbox) {
	alive, kill := context.WithCancelCause(context.WithoutCancel(ctx))
	wctx, unwatch := context.WithCancel(context.WithoutCancel(ctx))
	sb.mu.Lock()
	sb.alive, sb.kill, sb.unwatch = alive, kill, unwatch
	sb.mu.Unlock()
	e.watchers.Add(1)
	go func() {
		defer e.watchers.Done()
		exit, ok := e.waitExit(wctx, sb)
		if ok {
			e.containerStopped(wctx, sb, exit)
		}
	}()
}

// watchRetry bounds the pause before asking again when the engine could not
// be asked (it went away for a moment).
const watchRetry = 30 * time.Second

// waitExit waits for sb's container to stop; ok is false when ctx ended
// first (the sandbox was removed, or the engine closed).
func (e *Engine) waitExit(ctx context.Context, sb *Sandbox) (backend.ContainerExit, bool) {
	pause := time.Second
	for {
		exit, err := e.be.WaitExit(ctx, sb.ContainerID)
		if err == nil {
			return exit, true
		}
		if ctx.Err() != nil {
			return backend.ContainerExit{}, false
		}
		e.log.Debug("waiting for a sandbox's container to stop", "id", sb.ID, "err", err, "retry_in", pause)
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return backend.ContainerExit{}, false
		case <-t.C:
		}
		pause = min(2*pause, watchRetry)
	}
}

// containerStopped ends the calls waiting in sb, remembers why sb is gone,
// and removes what is left of it. A stop the engine asked for itself
// (sandbox_stop, expiry, Close) is not news.
func (e *Engine) containerStopped(ctx context.Context, sb *Sandbox, exit backend.ContainerExit) {
	sb.mu.Lock()
	removing, alive, kill := sb.removing, sb.alive, sb.kill
	sb.mu.Unlock()
	if removing || alive == nil || alive.Err() != nil {
		return
	}
	d := &diedError{id: sb.ID, memoryMB: sb.Limits.MemoryMB, pids: sb.Limits.Pids, exit: exit, at: time.Now()}
	kill(d)
	if context.Cause(alive) != error(d) {
		return // the watcher and reconcile both saw it; the other one won
	}
	e.bury(sb.ID, d)
	e.log.Warn("sandbox's container stopped on its own", "id", sb.ID, "exit_code", exit.ExitCode, "oom_killed", exit.OOMKilled, "removed", exit.Removed)
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := e.remove(rctx, sb); err != nil {
		e.log.Warn("remove a stopped sandbox", "id", sb.ID, "err", err)
	}
}

// graveLimit bounds how many gone sandboxes the engine remembers.
const graveLimit = 256

// bury remembers why a sandbox is gone, for later calls on its id.
func (e *Engine) bury(id string, why *diedError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.graves == nil {
		e.graves = map[string]*diedError{}
	}
	if _, ok := e.graves[id]; !ok {
		e.graveOrder = append(e.graveOrder, id)
	}
	e.graves[id] = why
	if len(e.graveOrder) > graveLimit {
		delete(e.graves, e.graveOrder[0])
		e.graveOrder = e.graveOrder[1:]
	}
}

// goneErr is the error for a call on a sandbox whose container stopped.
func goneErr(d *diedError) error {
	return fmt.Errorf("%w; it no longer exists: create a new one with sandbox_create", d)
}

// stoppedDuring reports, after a call in sb ended, whether sb's container
// stopped under it. suspect says the call ended in a way a stopped
// container explains (an error, a signal, an interpreter that went away);
// only then is the container probed, and when it does not answer, the
// watcher's report (which says whether it was an OOM kill) awaited.
func (e *Engine) stoppedDuring(ctx context.Context, sb *Sandbox, suspect bool) *diedError {
	if d := sb.died(); d != nil || !suspect {
		return d
	}
	alive := sb.life()
	if alive == nil || sb.isRemoving() || e.answers(ctx, sb) {
		return nil
	}
	t := time.NewTimer(10 * time.Second)
	defer t.Stop()
	select {
	case <-alive.Done():
	case <-t.C:
	case <-ctx.Done():
	}
	return sb.died()
}

// result fills in the result of a call whose sandbox's container stopped
// under it. An out-of-memory kill is a normal result (exit 137,
// oom_killed, as under runc, where only the process is killed); any other
// end is the error that the sandbox is gone.
func (d *diedError) result(res *ExecResult, stdout, stderr *output.Capture) error {
	if d.exit.OOMKilled {
		res.ExitCode, res.OOMKilled = 137, true
		_, _ = stderr.Write([]byte(d.note()))
	}
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	if d.exit.OOMKilled {
		return nil
	}
	return goneErr(d)
}

// note is what a result's stderr says of a container killed for memory.
func (d *diedError) note() string {
	return fmt.Sprintf("\n[mcp-sandbox: the sandbox %s; it no longer exists (nor does anything in it): create a new one with sandbox_create]\n", d.what())
}

// answers reports whether sb's container still runs processes. It starts
// one rather than asking for the container's state: a process killed with
// its container can end before the engine marks the container stopped.
func (e *Engine) answers(ctx context.Context, sb *Sandbox) bool {
	pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	pctx, unbind := sb.bound(pctx)
	defer unbind()
	st, err := e.be.Exec(pctx, sb.ContainerID, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", "exit 0"}, User: sb.User})
	return err == nil && st.ExitCode == 0
}

// containerRunning reports whether sb's container still runs (an
// interpreter that ended may have ended with its container).
func (e *Engine) containerRunning(ctx context.Context, sb *Sandbox) bool {
	list, err := e.be.List(ctx)
	if err != nil {
		return true // cannot tell; do not claim it is gone
	}
	for _, c := range list {
		if c.ID == sb.ContainerID {
			return c.State == "running"
		}
	}
	return false
}

// containerGone turns an exec error on a container that no longer exists
// (stopped from the tray, removed by hand) into ErrNotFound and forgets the
// sandbox.
func (e *Engine) containerGone(ctx context.Context, sb *Sandbox, err error) error {
	if errors.Is(err, backend.ErrDockerUnreachable) {
		return err
	}
	if d := e.stoppedDuring(ctx, sb, true); d != nil {
		return goneErr(d)
	}
	list, lerr := e.be.List(ctx)
	if lerr != nil {
		return err
	}
	for _, c := range list {
		if c.ID == sb.ContainerID && c.State == "running" {
			return err
		}
	}
	e.forget(sb.ID)
	return fmt.Errorf("%w: sandbox %s is gone (stopped from the tray or removed); create a new one with sandbox_create", ErrNotFound, sb.ID)
}

// oomCountScript prints the container's cgroup OOM-kill counter (cgroup v2
// or v1), using only sh builtins.
const oomCountScript = `f=/sys/fs/cgroup/memory.events; [ -r "$f" ] || f=/sys/fs/cgroup/memory/memory.oom_control
while read -r k v; do [ "$k" = oom_kill ] && echo "$v"; done < "$f"; exit 0`

// oomKilled reports whether the kernel's OOM killer struck in sb since the
// last check; a process killed with SIGKILL (exit 137) for another reason
// does not count.
func (e *Engine) oomKilled(ctx context.Context, sb *Sandbox) bool {
	// Any process of the sandbox user can write into the probe's
	// stdout (through /proc/PID/fd/1): only a counter's worth is kept.
	var buf bytes.Buffer
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	_, err := e.be.Exec(cctx, sb.ContainerID, backend.ExecSpec{Cmd: []string{"/bin/sh", "-c", oomCountScript}, Env: sbfiles.ServerEnv, User: sb.User, Stdout: &backend.LimitedBuffer{B: &buf, N: 64}})
	if err != nil && !e.containerRunning(cctx, sb) {
		return false
	}
	n, err := strconv.Atoi(strings.TrimSpace(buf.String()))
	if err != nil {
		// No counter (gVisor, some VMs), or a sandbox so full that the
		// probe itself could not run: exit 137 with memory at the limit
		// is the best evidence there is.
		u, uerr := e.be.Usage(cctx, sb.ContainerID)
		return uerr == nil && u.MemoryLimit > 0 && u.MemoryBytes*10 >= u.MemoryLimit*9
	}
	sb.mu.Lock()
	defer sb.mu.Unlock()
	if n > sb.oomKills {
		sb.oomKills = n
		return true
	}
	return false
}

// oomResult is the result of a command killed for memory: exit 137,
// oom_killed, and a note that says so.
func (e *Engine) oomResult(res ExecResult, stdout, stderr *output.Capture, sb *Sandbox) ExecResult {
	res.ExitCode, res.OOMKilled = 137, true
	fmt.Fprintf(stderr, "\n[mcp-sandbox: killed for using more than the sandbox's %d MB of memory (files in /workspace count too)]\n", sb.Limits.MemoryMB)
	res.Stdout, res.Stderr = stdout.String(), stderr.String()
	res.Truncated = stdout.Truncated() || stderr.Truncated()
	return res
}
