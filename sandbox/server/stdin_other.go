//go:build !unix

package server

import "io"

// pollStdin leaves stdin as it is: Windows has no poller for a pipe.
func pollStdin(in io.Reader) io.Reader { return in }
