package hostfs

import (
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// openUpFlags opens a parent directory for fstat only: O_PATH needs no
// read permission on it.
const openUpFlags = unix.O_PATH

// isMountRoot reports whether the directory open as fd is the root of a
// mount of a subdirectory, such as a bind mount: a second name for a
// directory that may lie anywhere, even inside a denied one, whose ".." is
// the mount point's. A mount of a whole file system ("/", /home, a tmpfs)
// is no such name: its root is no other directory's second name. Kernels
// before 5.8 do not say, and then no directory is taken for one.
func isMountRoot(fd int) bool {
	var st unix.Statx_t
	if err := unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_INO|unix.STATX_MNT_ID, &st); err != nil {
		return false
	}
	if st.Attributes_mask&unix.STATX_ATTR_MOUNT_ROOT == 0 || st.Attributes&unix.STATX_ATTR_MOUNT_ROOT == 0 {
		return false
	}
	if st.Mask&unix.STATX_MNT_ID == 0 {
		return true // cannot tell which mount: take it for a bind mount
	}
	return mountSource(st.Mnt_id) != "/"
}

// mountSource returns the directory of its file system that the mount id
// shows (the fourth field of /proc/self/mountinfo: "/" for a whole file
// system, the subdirectory for a bind mount); "" when not found.
func mountSource(id uint64) string {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return ""
	}
	want := strconv.FormatUint(id, 10) + " "
	for _, line := range strings.Split(string(b), "\n") {
		if !strings.HasPrefix(line, want) {
			continue
		}
		if f := strings.Fields(line); len(f) > 3 {
			return f[3]
		}
	}
	return ""
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
