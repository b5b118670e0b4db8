package agent

import (
	"os"
	"syscall"
	"unsafe"
)

// release drops the pages that lie wholly inside b, an embedded binary
// that is never written, from the process's memory: they are the file's
// own, so the kernel reads them back from the page cache when the next
// copy needs them. Pages shared with other data are left alone.
func release(b []byte) {
	if len(b) == 0 {
		return
	}
	ps := uintptr(os.Getpagesize())
	start := uintptr(unsafe.Pointer(&b[0]))
	end := start + uintptr(len(b))
	first := (start + ps - 1) &^ (ps - 1)
	last := end &^ (ps - 1)
	if last <= first {
		return
	}
	p := unsafe.Add(unsafe.Pointer(&b[0]), first-start)
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), last-first), syscall.MADV_DONTNEED)
}
