package hostfs

import (
	"path/filepath"

	"golang.org/x/sys/windows"
)

// longPathName expands the 8.3 short names of p (C:\Users\ME\APPDAT~1 is
// C:\Users\me\AppData) with GetLongPathName, for the longest part of p that
// exists.
func longPathName(p string) string {
	rest := ""
	for cur := p; ; {
		if long, ok := getLong(cur); ok {
			if rest == "" {
				return long
			}
			return filepath.Join(long, rest)
		}
		up := filepath.Dir(cur)
		if up == cur {
			return p
		}
		rest = filepath.Join(filepath.Base(cur), rest)
		cur = up
	}
}

func getLong(p string) (string, bool) {
	in, err := windows.UTF16PtrFromString(p)
	if err != nil {
		return "", false
	}
	buf := make([]uint16, windows.MAX_LONG_PATH)
	n, err := windows.GetLongPathName(in, &buf[0], uint32(len(buf)))
	if err != nil || n == 0 || int(n) > len(buf) {
		return "", false
	}
	return windows.UTF16ToString(buf[:n]), true
}
