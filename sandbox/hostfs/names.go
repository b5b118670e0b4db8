package hostfs

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"unicode"
)

// nameLookup is how the fence learns how a volume spells names: the name
// guard beside the identity check. Tests give a fake one.
type nameLookup interface {
	// longName returns p with every short (8.3) component that exists
	// replaced by its long name; p itself where there is none.
	longName(p string) string
	// caseInsensitive reports whether the volume holding p finds a name
	// whatever its case.
	caseInsensitive(p string) bool
}

// lookup returns the fence's nameLookup.
func (f Fence) lookup() nameLookup {
	if f.names != nil {
		return f.names
	}
	return osNames{}
}

// osNames asks the file system.
type osNames struct{}

func (osNames) longName(p string) string { return longPathName(p) }

// caseInsensitive probes the volume: the nearest existing component of p
// whose name has letters is looked up again with their case swapped, and
// the volume ignores case when that finds the same file. When nothing can
// be probed, macOS and Windows (whose default volumes ignore case) are
// taken to ignore it and others not.
func (osNames) caseInsensitive(p string) bool {
	for cur := filepath.Clean(p); ; cur = filepath.Dir(cur) {
		base := filepath.Base(cur)
		if swapped := swapCase(base); swapped != base {
			a, errA := os.Lstat(cur)
			if errA == nil {
				b, errB := os.Lstat(filepath.Join(filepath.Dir(cur), swapped))
				return errB == nil && os.SameFile(a, b)
			}
		}
		if filepath.Dir(cur) == cur {
			return runtime.GOOS == "darwin" || runtime.GOOS == "windows"
		}
	}
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case unicode.IsUpper(r):
			return unicode.ToLower(r)
		case unicode.IsLower(r):
			return unicode.ToUpper(r)
		}
		return r
	}, s)
}

// withinFold is within without case: root and p compared case-folded.
func withinFold(root, p string) bool {
	return within(foldName(root), foldName(p))
}

// foldName folds a path's case the way volumes that ignore case do for
// the common letters (upper, then lower: "ſ" and "S" both become "s").
func foldName(p string) string {
	return strings.ToLower(strings.ToUpper(p))
}
