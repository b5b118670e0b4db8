package atomicfile

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"runtime"
)

// WriteIn is Write for the file name of the directory open as dir: the
// temporary file is made and renamed through the handle, so a directory
// swapped for a symlink meanwhile changes nothing (name must be a plain
// name, not a path).
func WriteIn(dir *os.Root, name string, data []byte, perm os.FileMode, o Options) (err error) {
	var b [8]byte
	rand.Read(b[:])
	tmp := "." + name + ".tmp-" + hex.EncodeToString(b[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	defer func() {
		if err != nil {
			f.Close()
			dir.Remove(tmp)
		}
	}()
	if _, err = f.Write(data); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if runtime.GOOS != "windows" {
		if err = f.Chmod(perm); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if o.Prepare != nil {
		if err = o.Prepare(f); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	if err = f.Sync(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if err = f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if o.Check != nil {
		if err = o.Check(); err != nil {
			return err
		}
	}
	if err = dir.Rename(tmp, name); err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	if runtime.GOOS != "windows" {
		if d, err := dir.Open("."); err == nil {
			_ = d.Sync()
			d.Close()
		}
	}
	return nil
}
