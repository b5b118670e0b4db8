//go:build !windows

package hostfs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// handleIdent reads the identity of an open file with fstat, through the
// descriptor, never by its name.
func handleIdent(fh *os.File) (ident, error) {
	return fdIdent(int(fh.Fd()))
}

func fdIdent(fd int) (ident, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return ident{}, err
	}
	id := statIdent(&st)
	id.mountRoot = id.dir && isMountRoot(fd)
	return id, nil
}

func statIdent(st *unix.Stat_t) ident {
	return ident{
		id:    fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		nlink: uint64(st.Nlink),
		dir:   st.Mode&unix.S_IFMT == unix.S_IFDIR,
	}
}

// infoIdent is the identity in a FileInfo from Lstat or Stat through a
// directory handle (fstatat); ok is false when it holds none.
func infoIdent(info fs.FileInfo) (ident, bool) {
	st, ok := info.Sys().(*syscall.Stat_t)
	if !ok {
		return ident{}, false
	}
	return ident{
		id:    fileID{dev: uint64(st.Dev), ino: uint64(st.Ino)},
		nlink: uint64(st.Nlink),
		dir:   info.IsDir(),
	}, true
}

// entryIdent is the identity of a walked directory entry (not followed).
func entryIdent(_ string, d fs.DirEntry) (ident, bool) {
	info, err := d.Info()
	if err != nil {
		return ident{}, false
	}
	return infoIdent(info)
}

// maxDepth bounds the climb of ancestry.
const maxDepth = 4096

// ancestry returns the identities of the directory open as fh and of every
// directory above it, climbing with openat(fd, "..") from the handle
// itself: a bind mount's "..", a renamed parent or a symlink in the name
// it was opened by change nothing.
func ancestry(fh *os.File) ([]ident, error) {
	fd, err := unix.Dup(int(fh.Fd()))
	if err != nil {
		return nil, err
	}
	var ids []ident
	for range maxDepth {
		id, err := fdIdent(fd)
		if err != nil {
			unix.Close(fd)
			return nil, err
		}
		if len(ids) > 0 && ids[len(ids)-1].id == id.id {
			unix.Close(fd)
			return ids, nil // "/" is its own parent
		}
		ids = append(ids, id)
		up, err := unix.Openat(fd, "..", openUpFlags|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		unix.Close(fd)
		if err != nil {
			return nil, err
		}
		fd = up
	}
	unix.Close(fd)
	return nil, fmt.Errorf("more than %d directories deep", maxDepth)
}
