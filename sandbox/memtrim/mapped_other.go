//go:build !linux

package memtrim

// DropMapped does nothing: macOS and Windows leave an executable's clean
// pages out of the figure they show for a process.
func DropMapped(match func(path string) bool) int64 { return 0 }

// Executable matches nothing where DropMapped does nothing.
func Executable() func(path string) bool { return func(string) bool { return false } }

// residentFile reads nothing: DropMapped does nothing here.
func residentFile() func() uint64 { return func() uint64 { return 0 } }
