package dockerhost

import (
	"fmt"
	"os"
)

// currentUID returns "": Windows has no /run/user directory.
func currentUID() string { return "" }

// checkLocal looks at a local endpoint before it is pinged. It reports
// missing when there is no file at a unix:// path (Docker Desktop and
// others can serve AF_UNIX sockets on Windows too). Named pipes are not
// opened here, since opening one would take a connection; the ping's own
// "not found" says that a pipe is missing.
func checkLocal(host string) (missing bool, target string, err error) {
	p, ok := unixPath(host)
	if !ok {
		return false, "", nil
	}
	if _, err := os.Lstat(p); err != nil {
		if errNotExist(err) {
			return true, "", fmt.Errorf("no socket at %s", p)
		}
		return false, "", fmt.Errorf("check socket: %w", err)
	}
	return false, "", nil
}
