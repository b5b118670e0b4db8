//go:build windows

package server

import (
	"os/exec"
	"syscall"

	"golang.org/x/sys/windows"
)

// detach starts the watchdog in a process group of its own (a console
// Ctrl-C or Ctrl-Break for the server's group does not reach it) and
// without a console window.
func detach(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{
		HideWindow:    true,
		CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_NO_WINDOW,
	}
}

// closeInheritedOnExec has nothing to do on Windows: a child inherits only
// the handles os/exec passes it.
func closeInheritedOnExec() {}

// selfExe is "" on Windows: os.Executable names the binary, which cannot
// be replaced while it runs.
func selfExe() string { return "" }
