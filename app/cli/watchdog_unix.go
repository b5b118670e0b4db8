//go:build !windows

package cli

import (
	"os/exec"
	"syscall"
)

// detach starts the watchdog in a session (and process group) of its own:
// a signal to the server's group — Ctrl-C in a terminal, a client that
// kills its child's group — does not reach it, and it has no controlling
// terminal to lose.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}
