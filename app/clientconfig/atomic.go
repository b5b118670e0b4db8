package clientconfig

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// errChangedMeanwhile means the file changed between reading and writing,
// so the edit must be redone on the new content.
var errChangedMeanwhile = errors.New("config file changed while it was being edited")

// writeAtomic replaces path with data so that a reader sees either the old
// file or the new one, never a part: a temporary file in the same directory
// is written, synced, given the old file's mode (and owner, where we may),
// and renamed over path; then the directory is synced so the rename lasts.
// check runs just before the rename; its error aborts the write.
func writeAtomic(path string, data []byte, perm fs.FileMode, old fs.FileInfo, check func() error) (err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			_ = f.Close()
			_ = os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Chmod(perm); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if old != nil {
		keepOwner(f, old)
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if check != nil {
		if err = check(); err != nil {
			return err
		}
	}
	if err = os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	syncDir(dir)
	return nil
}
