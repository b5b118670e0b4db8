package hostfs

import "golang.org/x/sys/unix"

// openUpFlags opens a parent directory for fstat only: O_PATH needs no
// read permission on it.
const openUpFlags = unix.O_PATH
