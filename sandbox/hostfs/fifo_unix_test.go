//go:build !windows

package hostfs

import (
	"syscall"
	"testing"
)

// mkfifo makes a named pipe at p.
func mkfifo(t *testing.T, p string) { must(t, syscall.Mkfifo(p, 0o644)) }
