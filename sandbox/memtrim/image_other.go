//go:build !linux

package memtrim

// dropImage does nothing outside Linux: there the figure the system shows
// for a process (macOS's memory footprint, Windows' private working set)
// already leaves out the clean pages of its executable.
func dropImage() int64 { return 0 }
