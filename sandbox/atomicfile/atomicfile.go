// Package atomicfile writes files so that a reader sees either the old
// content or the new, never a mix, and a crash leaves the old file intact.
//
//	err := atomicfile.WriteFile(path, data, 0o600)
package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to a temporary file in filename's directory, syncs
// it, and renames it over filename. The file gets mode perm.
func WriteFile(filename string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(filename)
	f, err := os.CreateTemp(dir, "."+filepath.Base(filename)+".tmp-*")
	if err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	if runtime.GOOS != "windows" {
		if err = f.Chmod(perm); err != nil {
			return fmt.Errorf("write %s: %w", filename, err)
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	if err = os.Rename(tmp, filename); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	syncDir(dir)
	return nil
}

// syncDir makes a rename durable; it is best effort (Windows cannot open a
// directory for syncing).
func syncDir(dir string) {
	if runtime.GOOS == "windows" {
		return
	}
	if d, err := os.Open(dir); err == nil {
		_ = d.Sync()
		d.Close()
	}
}
