//go:build unix

package testenv

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
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

// CheckStdinPolled puts a pipe on stdin, calls poll (the code under test
// turning stdin into what it reads) and checks that a pipe is read
// through the poller: a file other than os.Stdin, stdin non-blocking, a
// read that can have a deadline, and msg, written then closed, read back
// whole with its end.
func CheckStdinPolled(t testing.TB, poll func() io.Reader, msg string) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	OnStdin(t, r)
	in, ok := poll().(*os.File)
	if !ok || in == os.Stdin || !StdinNonblocking(t) {
		t.Fatal("stdin on a pipe was left blocking")
	}
	if err := in.SetReadDeadline(time.Now().Add(50 * time.Millisecond)); err != nil {
		t.Fatalf("stdin on a pipe is not in the poller: %v", err)
	}
	buf := make([]byte, 8)
	if _, err := in.Read(buf); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("read with nothing written: %v, want the deadline", err)
	}
	_ = in.SetReadDeadline(time.Time{})
	go func() {
		_, _ = w.Write([]byte(msg))
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != msg {
		t.Fatalf("read %q, %v", got, err)
	}
}
