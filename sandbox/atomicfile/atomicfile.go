package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// WriteFile writes data to a temporary file in filename's directory, syncs
// it, and renames it over filename. The file gets mode perm.
func WriteFile(filename string, data []byte, perm os.FileMode) error {
	return Write(filename, data, perm, Options{})
}

// Options adds steps to Write for callers that need them.
type Options struct {
	// Prepare runs on the written temporary file before it is synced,
	// e.g. to give it the owner of the file it replaces.
	Prepare func(f *os.File) error
	// Check runs just before the rename; its error aborts the write and
	// leaves filename as it was (e.g. when the file changed meanwhile).
	Check func() error
}

// Write is WriteFile with the extra steps of o.
func Write(filename string, data []byte, perm os.FileMode, o Options) (err error) {
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
	if o.Prepare != nil {
		if err = o.Prepare(f); err != nil {
			return fmt.Errorf("write %s: %w", filename, err)
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", filename, err)
	}
	if o.Check != nil {
		if err = o.Check(); err != nil {
			return err
		}
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
