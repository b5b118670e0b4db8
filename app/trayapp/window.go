package trayapp

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
)

// WindowBinary is the window's executable, installed beside the tray's.
const WindowBinary = "mcp-sandbox-window"

// windowProc is a window process the tray started.
type windowProc struct {
	cmd  *exec.Cmd
	done chan struct{}
	// closing is set when the tray itself ends the window (Quit), so its
	// end is not reported as a crash.
	closing atomic.Bool
}

func (a *App) windowPath() string {
	name := WindowBinary
	if runtime.GOOS == "windows" {
		name += ".exe"
	}
	return filepath.Join(filepath.Dir(a.exe), name)
}

// openWindow starts the window process (a second one, should one run
// already, brings that one forward and exits). The window exits when it is
// closed: nothing of it stays in memory.
func (a *App) openWindow(args ...string) {
	if a.ctx.Err() != nil {
		return
	}
	cmd := exec.Command(a.windowPath(), args...)
	cmd.Stdout, cmd.Stderr = nil, logWriter{a, "window: "}
	cmd.Env = os.Environ()
	if err := cmd.Start(); err != nil {
		a.log.Error("open the window", "err", err)
		a.notify("Could not open the MCP Sandbox window: " + err.Error())
		return
	}
	a.log.Info("window opened", "pid", cmd.Process.Pid)
	a.update(func(s *trayState) { s.failed = 0 }) // the person looks now
	p := &windowProc{cmd: cmd, done: make(chan struct{})}
	a.mu.Lock()
	a.window = p
	a.mu.Unlock()
	go func() {
		err := cmd.Wait()
		a.mu.Lock()
		if a.window == p {
			a.window = nil // the menu's Open starts a new one at once
		}
		a.mu.Unlock()
		close(p.done)
		if !p.closing.Load() && crashed(err) {
			a.log.Error("the window process ended unexpectedly", "pid", cmd.Process.Pid, "err", err)
			a.notify("The MCP Sandbox window closed unexpectedly (" + err.Error() + "). The tray and your sandboxes keep running: choose “" + traymenu.LabelOpen + "” in the menu to open it again. Details are in tray.log.")
			return
		}
		a.log.Info("window process ended", "pid", cmd.Process.Pid, "err", err)
	}()
}

// closeWindow ends the window process the tray started, if it runs.
func (a *App) closeWindow() {
	a.mu.Lock()
	p := a.window
	a.mu.Unlock()
	if p == nil {
		return
	}
	p.closing.Store(true)
	terminate(p.cmd.Process)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// crashed reports whether a window process that ended with err died rather
// than quit: a non-zero exit (a Go panic or fatal error exits 2) or a
// signal other than the ones a session sends to end programs (SIGTERM,
// SIGINT, SIGHUP), such as SIGKILL from the OOM killer or SIGSEGV.
func crashed(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return err != nil
	}
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		switch ws.Signal() {
		case syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP:
			return false
		}
		return true
	}
	return ee.ExitCode() != 0
}
