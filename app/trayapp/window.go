package trayapp

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"time"
)

// WindowBinary is the window's executable, installed beside the tray's.
const WindowBinary = "mcp-sandbox-window"

// windowProc is a window process the tray started.
type windowProc struct {
	cmd  *exec.Cmd
	done chan struct{}
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
	p := &windowProc{cmd: cmd, done: make(chan struct{})}
	a.mu.Lock()
	a.window = p
	a.mu.Unlock()
	go func() {
		err := cmd.Wait()
		close(p.done)
		a.log.Info("window process ended", "pid", cmd.Process.Pid, "err", err)
		a.mu.Lock()
		if a.window == p {
			a.window = nil
		}
		a.mu.Unlock()
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
	terminate(p.cmd.Process)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}
