//go:build !windows

package hostfs

import "syscall"

// openNoBlock keeps an open of a FIFO swapped in for a file from hanging.
const openNoBlock = syscall.O_NONBLOCK
