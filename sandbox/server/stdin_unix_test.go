//go:build unix

package server

import (
	"io"
	"os"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// A client's pipe on stdin is read through the poller (a read can have a
// deadline) and still yields every byte and the end.
func TestPollStdinPipe(t *testing.T) {
	testenv.CheckStdinPolled(t, func() io.Reader { return pollStdin(os.Stdin) }, `{"jsonrpc":"2.0","id":1,"method":"ping"}`+"\n")
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
