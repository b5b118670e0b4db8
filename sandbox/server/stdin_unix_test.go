//go:build unix

package server

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// A client's pipe on stdin is read through the poller (a read can have a
// deadline) and still yields every byte and the end.
func TestPollStdinPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	testenv.OnStdin(t, r)
	in, ok := pollStdin(os.Stdin).(*os.File)
	if !ok || in == os.Stdin || !testenv.StdinNonblocking(t) {
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
	msg := `{"jsonrpc":"2.0","id":1,"method":"ping"}` + "\n"
	go func() {
		_, _ = w.Write([]byte(msg))
		w.Close()
	}()
	got, err := io.ReadAll(in)
	if err != nil || string(got) != msg {
		t.Fatalf("read %q, %v", got, err)
	}
}

// A file on stdin, or a reader that is not the process's stdin, is left
// as it is.
func TestPollStdinLeavesOthers(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "stdin")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	testenv.OnStdin(t, f)
	if in := pollStdin(os.Stdin); in != io.Reader(os.Stdin) || testenv.StdinNonblocking(t) {
		t.Fatal("stdin on a file was changed")
	}
	sr := strings.NewReader("x")
	if in := pollStdin(sr); in != io.Reader(sr) {
		t.Fatal("a reader that is not stdin was replaced")
	}
}
