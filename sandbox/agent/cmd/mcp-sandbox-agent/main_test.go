package main

import (
	"errors"
	"io"
	"os"
	"syscall"
	"testing"
	"time"
)

// withStdin puts f on fd 0 for the test, and the test's own stdin back
// after it.
func withStdin(t *testing.T, f *os.File) {
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

func nonblocking(t *testing.T) bool {
	t.Helper()
	fl, _, errno := syscall.Syscall(syscall.SYS_FCNTL, 0, syscall.F_GETFL, 0)
	if errno != 0 {
		t.Fatal(errno)
	}
	return fl&syscall.O_NONBLOCK != 0
}

// The engine's exec gives the agent a pipe for stdin: it is read through
// the poller (a read can have a deadline), and still reads every byte and
// the end.
func TestPollableStdinPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	withStdin(t, r)
	in := pollableStdin()
	if in == os.Stdin || !nonblocking(t) {
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
		_, _ = w.Write([]byte("nonce start 2\n{}"))
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != "nonce start 2\n{}" {
		t.Fatalf("read %q, %v", got, err)
	}
}

// Anything else on stdin (a file, say) is left as it is.
func TestPollableStdinFile(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	withStdin(t, f)
	if in := pollableStdin(); in != os.Stdin || nonblocking(t) {
		t.Fatal("stdin on a file was changed")
	}
}
