//go:build unix

package testenv

import (
	"os"
	"syscall"
	"testing"
)

// OnStdin puts f on fd 0 for the test, and the test's own stdin back
// after it (with its blocking mode), for tests of code that reads the
// process's stdin.
func OnStdin(t testing.TB, f *os.File) {
	t.Helper()
	saved, err := syscall.Dup(0)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Dup2(int(f.Fd()), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Dup2(saved, 0)
		_ = syscall.Close(saved)
	})
}

// StdinNonblocking reports whether fd 0 is in non-blocking mode.
func StdinNonblocking(t testing.TB) bool {
	t.Helper()
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return fl&syscall.O_NONBLOCK != 0
}
