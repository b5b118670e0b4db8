package bundled

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// ErrNotFound means no mcp-sandbox binary was found next to the tray nor on
// PATH.
var ErrNotFound = errors.New("bundled mcp-sandbox not found")

// Server is where the server binary was found.
type Server struct {
	// Path is the binary's absolute path.
	Path string
	// Source says how it was found: "next to the tray", "in the app
	// bundle", or "on PATH" (a development set-up, not a bundle).
	Source string
}

// binaryName is the server's file name on this system.
func binaryName(goos string) string {
	if goos == "windows" {
		return "mcp-sandbox.exe"
	}
	return "mcp-sandbox"
}

// Find returns the server that belongs to the tray executable exe: in the
// same directory (also after following a symlink to exe, as a package's
// /usr/bin link does), or, inside a macOS app bundle, in Contents/MacOS,
// Contents/Helpers or Contents/Resources. As a last resort it looks on
// PATH.
func Find(exe string) (Server, error) {
	return find(exe, runtime.GOOS, exec.LookPath)
}

func find(exe, goos string, lookPath func(string) (string, error)) (Server, error) {
	name := binaryName(goos)
	dirs := []string{filepath.Dir(exe)}
	if real, err := filepath.EvalSymlinks(exe); err == nil && filepath.Dir(real) != dirs[0] {
		dirs = append(dirs, filepath.Dir(real))
	}
	var tried []string
	for _, d := range dirs {
		if contents, ok := bundleContents(d); ok {
			for _, sub := range []string{"MacOS", "Helpers", "Resources"} {
				p := filepath.Join(contents, sub, name)
				tried = append(tried, p)
				if isExecutable(p, goos) {
					return Server{Path: p, Source: "in the app bundle"}, nil
				}
			}
			continue
		}
		p := filepath.Join(d, name)
		tried = append(tried, p)
		if isExecutable(p, goos) {
			return Server{Path: p, Source: "next to the tray"}, nil
		}
	}
	if p, err := lookPath(name); err == nil {
		if abs, err := filepath.Abs(p); err == nil {
			return Server{Path: abs, Source: "on PATH"}, nil
		}
	}
	return Server{}, fmt.Errorf("%w: tried %s and PATH", ErrNotFound, strings.Join(tried, ", "))
}

// bundleContents returns X.app/Contents when dir is X.app/Contents/MacOS.
func bundleContents(dir string) (string, bool) {
	contents := filepath.Dir(dir)
	if filepath.Base(dir) == "MacOS" && filepath.Base(contents) == "Contents" && strings.HasSuffix(filepath.Dir(contents), ".app") {
		return contents, true
	}
	return "", false
}

func isExecutable(p, goos string) bool {
	fi, err := os.Stat(p)
	if err != nil || !fi.Mode().IsRegular() {
		return false
	}
	return goos == "windows" || fi.Mode().Perm()&0o111 != 0
}
