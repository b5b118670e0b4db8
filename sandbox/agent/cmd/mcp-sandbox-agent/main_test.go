package main

import (
	"errors"
	"io"
	"os"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// The engine's exec gives the agent a pipe for stdin: it is read through
// the poller (a read can have a deadline), and still reads every byte and
// the end.
func TestPollableStdinPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	testenv.OnStdin(t, r)
	in := pollableStdin()
	if in == os.Stdin || !testenv.StdinNonblocking(t) {
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
	testenv.OnStdin(t, f)
	if in := pollableStdin(); in != os.Stdin || testenv.StdinNonblocking(t) {
		t.Fatal("stdin on a file was changed")
	}
}
