//go:build cgo && linux

package windowapp

/*
#include <malloc.h>
*/
import "C"

// trimCHeap hands C's free heap back to the system (glibc keeps what the
// GL driver freed, such as the textures of a tab no longer shown).
func trimCHeap() { C.malloc_trim(0) }
