package hostfs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// openDirBeneath opens the directory name of parent as a root of its own,
// and checks that what was opened is the entry want (from parent.Lstat,
// or nil to take it now): a directory that is swapped for a symlink, or
// for another directory, between the look and the open is refused. With
// every directory of a walk opened this way from the one above it, the
// walk reads exactly the tree it decided on, whatever changes on disk.
func openDirBeneath(parent *os.Root, name string, want fs.FileInfo) (*os.Root, error) {
	if want == nil {
		var err error
		if want, err = parent.Lstat(name); err != nil {
			return nil, fenceErr(err)
		}
	}
	if !want.IsDir() {
		return nil, fmt.Errorf("%w: %s is not a directory (a symlink or a file took its place)", ErrFence, name)
	}
	d, err := parent.OpenRoot(name)
	if err != nil {
		return nil, fenceErr(err)
	}
	got, err := d.Stat(".")
	if err != nil {
		d.Close()
		return nil, err
	}
	if !os.SameFile(want, got) {
		d.Close()
		return nil, fmt.Errorf("%w: %s changed while it was being copied", ErrFence, name)
	}
	return d, nil
}

// openPathBeneath opens rel (a clean, local path of directories below
// r) one directory at a time with openDirBeneath, so that no symlink is
// followed on the way.
func openPathBeneath(r *os.Root, rel string) (*os.Root, error) {
	cur, err := r.OpenRoot(".")
	if err != nil {
		return nil, err
	}
	if rel == "." || rel == "" {
		return cur, nil
	}
	for _, part := range strings.Split(rel, string(filepath.Separator)) {
		next, err := openDirBeneath(cur, part, nil)
		cur.Close()
		if err != nil {
			return nil, err
		}
		cur = next
	}
	return cur, nil
}

// openFileBeneath opens the regular file name of d for reading and checks
// it is the entry want.
func openFileBeneath(d *os.Root, name string, want fs.FileInfo) (*os.File, error) {
	f, err := d.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
	if err != nil {
		return nil, fenceErr(err)
	}
	got, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !got.Mode().IsRegular() || !os.SameFile(want, got) {
		f.Close()
		return nil, fmt.Errorf("%w: %s changed while it was being copied", ErrFence, name)
	}
	return f, nil
}
