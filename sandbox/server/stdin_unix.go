//go:build unix

package server

import (
	"io"
	"os"
	"syscall"
)

// pollStdin gives the stdio transport its stdin through the runtime's
// poller when it is the process's own stdin and a pipe or a socket (as
// every MCP client starts a server). The reader then parks between
// messages instead of holding a thread in read(2), and a message that
// arrives is handled on the thread the poller woke, not after a second
// thread has woken to take it: about 30 µs of every call here, more under
// load. Anything else (a terminal, a file, a test's reader) is left as it
// is. The pipe is the client's and ours alone; its non-blocking mode
// outlives the server harmlessly (the client's end is a file description
// of its own).
func pollStdin(in io.Reader) io.Reader {
	if f, ok := in.(*os.File); !ok || f != os.Stdin {
		return in
	}
	var st syscall.Stat_t
	if err := syscall.Fstat(0, &st); err != nil {
		return in
	}
	if t := st.Mode & syscall.S_IFMT; t != syscall.S_IFIFO && t != syscall.S_IFSOCK {
		return in
	}
	if err := syscall.SetNonblock(0, true); err != nil {
		return in
	}
	return os.NewFile(0, "stdin")
}
