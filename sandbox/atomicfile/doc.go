// Package atomicfile writes files so that a reader sees either the old
// content or the new, never a mix, and a crash leaves the old file intact.
//
//	err := atomicfile.WriteFile(path, data, 0o600)
//
// Imports: none
package atomicfile
