package server

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"time"
)

// WatchdogCommand is the hidden subcommand a server re-runs its own
// executable with to watch over it: the command line runs Watch for it.
// It is not listed in the usage: nobody runs it by hand.
const WatchdogCommand = "__watchdog"

// Pacing of the server's restarts of a watchdog that died while the server
// lives.
const (
	watchdogRestartFirst = time.Second
	watchdogRestartMax   = 30 * time.Second
)

// WatchdogArgs is what a watchdog needs to find and remove what its server
// leaves: the server's owner id, its pid (for the log), and the engine it
// uses (the config's docker.host as the server read it, and the config
// file that named it; the environment, DOCKER_HOST and contexts included,
// is inherited).
type WatchdogArgs struct {
	Owner      string
	ConfigHost string
	ConfigFile string
	// Backend is the server's backend.kind when it is not Docker.
	Backend string
	Debug   bool
}

// argv is the watchdog's command line, after the executable.
func (a WatchdogArgs) argv() []string {
	argv := []string{WatchdogCommand, "--owner", a.Owner, "--server-pid", strconv.Itoa(os.Getpid()),
		"--config-host", a.ConfigHost, "--config-file", a.ConfigFile}
	if a.Backend != "" {
		argv = append(argv, "--backend", a.Backend)
	}
	if a.Debug {
		argv = append(argv, "--debug")
	}
	return argv
}

// Watchdog is the server's side of its dead man's switch: a child process
// (the same executable, WatchdogCommand) in a session of its own, whose
// stdin is the read end of a pipe only this process holds the write end
// of. However this process ends — a clean exit, a signal, a panic,
// SIGKILL, the OOM killer — the kernel closes the write end, the watchdog
// reads EOF and removes everything of this server's owner id. The server
// never writes to the pipe and never closes it: only its death does.
type Watchdog struct {
	log  *slog.Logger
	args WatchdogArgs

	mu     sync.Mutex
	pipe   *os.File // the write end
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd has ended
}

// StartWatchdog starts the watchdog and keeps one running until ctx ends
// (the server is stopping: from then on the last one waits for the
// server's exit). A watchdog that cannot start is logged and tried again.
func StartWatchdog(ctx context.Context, log *slog.Logger, args WatchdogArgs) *Watchdog {
	w := &Watchdog{log: log, args: args}
	closeInheritedOnExec()
	err := w.spawn()
	if err != nil {
		log.Warn("start the watchdog that removes this server's sandboxes if it dies; trying again", "err", err)
	}
	go w.keep(ctx, err == nil)
	return w
}

// spawn starts one watchdog process on a fresh pipe.
func (w *Watchdog) spawn() error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find this executable: %w", err)
	}
	r, pw, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("pipe: %w", err)
	}
	defer r.Close() // the child has its copy
	cmd := exec.Command(exe, w.args.argv()...)
	if self := selfExe(); self != "" {
		// This very binary, even when an upgrade replaced or removed the
		// file at exe since the server started.
		cmd.Path = self
	}
	// Not the server's stdio: the client must see EOF when the server
	// dies, and the watchdog must not die of the client leaving. It logs
	// to the log file only.
	cmd.Stdin, cmd.Stdout, cmd.Stderr = r, nil, nil
	detach(cmd)
	if err := cmd.Start(); err != nil {
		pw.Close()
		return fmt.Errorf("start %s %s: %w", exe, WatchdogCommand, err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	w.mu.Lock()
	if w.pipe != nil {
		w.pipe.Close() // the write end of a watchdog that is gone
	}
	w.pipe, w.cmd, w.exited = pw, cmd, exited
	w.mu.Unlock()
	w.log.Info("watchdog started", "watchdog_pid", cmd.Process.Pid, "owner", w.args.Owner)
	return nil
}

// watchdogReleased is what a server writes to its watchdog's pipe once it
// has removed everything itself: the watchdog then checks once and does
// not wait for an engine that does not answer.
const watchdogReleased = 'r'

// watchdogReleaseWait bounds how long a server that released its watchdog
// waits for it to take its one look and exit: a watchdog still finding
// the engine (at most 10 s) then looks once (at most 10 s). Normally it is
// a few milliseconds.
const watchdogReleaseWait = 25 * time.Second

// Release tells the watchdog that this process removed everything it made
// (its engine closed without an error), and waits for it to take its one
// look and exit, so that nothing of the server outlives its exit (not even
// a log line the watchdog writes into the state directory afterwards). It
// is the last thing before exit; the pipe stays open until the process
// ends.
func (w *Watchdog) Release() {
	w.mu.Lock()
	pipe, exited := w.pipe, w.exited
	w.mu.Unlock()
	if pipe == nil {
		return
	}
	if _, err := pipe.Write([]byte{watchdogReleased}); err != nil {
		return
	}
	t := time.NewTimer(watchdogReleaseWait)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		w.log.Warn("the watchdog did not finish its last look in time; exiting without it", "after", watchdogReleaseWait)
	}
}

// keep waits for the watchdog and starts another when it ends while the
// server lives, further apart while they keep failing.
func (w *Watchdog) keep(ctx context.Context, running bool) {
	wait := watchdogRestartFirst
	for {
		if running {
			w.mu.Lock()
			cmd, exited := w.cmd, w.exited
			w.mu.Unlock()
			started := time.Now()
			<-exited
			if ctx.Err() != nil {
				return
			}
			w.log.Warn("the watchdog ended while this server runs; starting another", "state", cmd.ProcessState.String())
			if time.Since(started) > watchdogRestartMax {
				wait = watchdogRestartFirst
			}
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
		wait = min(2*wait, watchdogRestartMax)
		if err := w.spawn(); err != nil {
			w.log.Warn("start the watchdog; trying again", "err", err, "in", wait)
			running = false
			continue
		}
		running = true
	}
}
