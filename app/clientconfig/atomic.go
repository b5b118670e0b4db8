package clientconfig

import (
	"errors"
	"io/fs"
	"os"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// errChangedMeanwhile means the file changed between reading and writing,
// so the edit must be redone on the new content.
var errChangedMeanwhile = errors.New("config file changed while it was being edited")

// writeAtomic replaces path with data so that a reader sees either the old
// file or the new one, never a part (sandbox/atomicfile), giving the new
// file the old one's mode and, where we may, its owner. check runs just
// before the rename; its error aborts the write.
func writeAtomic(path string, data []byte, perm fs.FileMode, old fs.FileInfo, check func() error) error {
	return atomicfile.Write(path, data, perm, atomicfile.Options{
		Prepare: func(f *os.File) error {
			if old != nil {
				keepOwner(f, old)
			}
			return nil
		},
		Check: check,
	})
}
