package main

import (
	"io"
	"os"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// The engine's exec gives the agent a pipe for stdin: it is read through
// the poller (a read can have a deadline), and still reads every byte and
// the end.
func TestPollableStdinPipe(t *testing.T) {
	testenv.CheckStdinPolled(t, func() io.Reader { return pollableStdin() }, "nonce start 2\n{}")
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
