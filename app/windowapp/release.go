//go:build cgo

package windowapp

import (
	"path/filepath"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/memtrim"
)

// releaseMapped is the window's release beyond Go's heap, once it is
// quiet: C's free heap, and the clean pages of the code it ran at start
// and rarely runs again — its own, and the GL driver's (Mesa's, with
// LLVM, which compiles shaders: under Xvfb or on a driver that links it,
// about 55 MB resident after the first frames, none needed to redraw).
func (a *App) releaseMapped() {
	trimCHeap()
	exe := memtrim.Executable()
	kib := memtrim.DropMapped(func(path string) bool { return exe(path) || glCode(path) })
	a.log.Debug("idle: clean code pages returned", "kib", kib)
}

// glCode reports whether path is a GL driver's library that stays loaded
// while the window runs: Mesa's drivers (dri/, libgallium) and the LLVM
// they link.
func glCode(path string) bool {
	base := filepath.Base(path)
	return strings.HasPrefix(base, "libLLVM") || strings.HasPrefix(base, "libgallium") ||
		strings.Contains(path, "/dri/")
}
