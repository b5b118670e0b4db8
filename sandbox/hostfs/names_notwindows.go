//go:build !windows

package hostfs

// longPathName: only Windows has short names.
func longPathName(p string) string { return p }
