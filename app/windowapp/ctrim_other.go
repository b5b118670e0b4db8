//go:build cgo && !linux

package windowapp

// trimCHeap does nothing: macOS's and Windows's allocators return freed
// memory themselves.
func trimCHeap() {}
