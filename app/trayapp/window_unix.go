//go:build !windows

package trayapp

import (
	"os"
	"syscall"
)

// terminate asks a process to end (SIGTERM).
func terminate(p *os.Process) { p.Signal(syscall.SIGTERM) }
