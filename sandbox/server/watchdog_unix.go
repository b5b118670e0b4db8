//go:build !windows

package server

import (
	"os"
	"os/exec"
	"runtime"
	"syscall"
)

// detach starts the watchdog in a session (and process group) of its own:
// a signal to the server's group — Ctrl-C in a terminal, a client that
// kills its child's group — does not reach it, and it has no controlling
// terminal to lose.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
}

// maxInheritedFD bounds the descriptors closeInheritedOnExec marks.
const maxInheritedFD = 4096

// closeInheritedOnExec marks every descriptor above stderr close-on-exec.
// Go opens its own that way, but descriptors the server inherited (a
// client that leaks a pipe into its child) stay open across exec: the
// watchdog, which outlives the server, would hold them, and a client
// waiting for EOF on such a pipe would wait for it too.
func closeInheritedOnExec() {
	for fd := 3; fd < maxInheritedFD; fd++ {
		syscall.CloseOnExec(fd)
	}
}

// selfExe names the running binary itself where the system can (Linux's
// /proc/self/exe), else "".
func selfExe() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	if _, err := os.Stat("/proc/self/exe"); err != nil {
		return ""
	}
	return "/proc/self/exe"
}
