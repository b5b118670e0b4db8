package supervisor

import (
	"os/exec"
	"syscall"
)

// dieWithParent has the kernel send the child SIGTERM when the tray dies,
// even by a crash, so no server is left listening behind it.
func dieWithParent(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM}
}
