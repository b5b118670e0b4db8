//go:build !windows && !linux

package hostfs

import "golang.org/x/sys/unix"

// openUpFlags opens a parent directory for fstat.
const openUpFlags = unix.O_RDONLY
