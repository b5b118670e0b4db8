//go:build !windows

package dockerhost

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// currentUID returns the user id that names the user's /run/user directory.
func currentUID() string { return strconv.Itoa(os.Getuid()) }

// checkLocal looks at a local endpoint before it is pinged. It reports
// missing when there is no socket file at a unix:// path, and the symlink
// target when the path is a link. Other schemes are left to the ping.
func checkLocal(host string) (missing bool, target string, err error) {
	p, ok := unixPath(host)
	if !ok {
		return false, "", nil
	}
	fi, err := os.Stat(p)
	if err != nil {
		if errNotExist(err) {
			return true, "", fmt.Errorf("no socket at %s", p)
		}
		return false, "", fmt.Errorf("check socket: %w", err)
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return false, "", fmt.Errorf("%s is not a socket", p)
	}
	if t, err := filepath.EvalSymlinks(p); err == nil && t != filepath.Clean(p) {
		target = t
	}
	return false, target, nil
}
