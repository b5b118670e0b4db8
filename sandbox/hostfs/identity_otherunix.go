//go:build !windows && !linux

package hostfs

import "golang.org/x/sys/unix"

// openUpFlags opens a parent directory for fstat.
const openUpFlags = unix.O_RDONLY

// isMountRoot: only Linux has bind mounts that give a directory inside a
// denied one a second name without a path through it.
func isMountRoot(int) bool { return false }

// pathIdent is the identity of the file p names (following links).
func pathIdent(p string) (ident, error) {
	var st unix.Stat_t
	if err := unix.Stat(p, &st); err != nil {
		return ident{}, err
	}
	return statIdent(&st), nil
}
