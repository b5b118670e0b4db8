package hostfs

import "golang.org/x/sys/unix"

// openUpFlags opens a parent directory for fstat only: O_PATH needs no
// read permission on it.
const openUpFlags = unix.O_PATH

// isMountRoot reports whether the directory open as fd is the root of a
// mount, such as a bind mount: a second name for a directory that may lie
// anywhere, even inside a denied one, whose ".." is the mount point's.
// Kernels before 5.8 do not say, and then no directory is taken for one.
func isMountRoot(fd int) bool {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO, &st); err != nil {
		return false
	}
	return st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT != 0 && st.Attributes&unix.STATX_ATTR_MOUNT_ROOT != 0
}

// pathIdent is the identity of the file p names (following links), read
// through an O_PATH handle, which opens nothing (a FIFO, a device) and
// says whether a directory is a mount's root.
func pathIdent(p string) (ident, error) {
	fd, err := unix.Open(p, unix.O_PATH|unix.O_CLOEXEC, 0)
	if err != nil {
		return ident{}, err
	}
	defer unix.Close(fd)
	return fdIdent(fd)
}
