package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// checkWriteName refuses, by name, a copy_out to dest that would write
// into, replace or create a place files.write_deny protects.
func (f Fence) checkWriteName(ws *denySet, dest string) error {
	if d := ws.byName(f.lookup(), dest); d != "" {
		return ws.refuse(dest, d)
	}
	if d := ws.covers(dest); d != "" {
		return fmt.Errorf("%w: writing %s would replace or create %s, which files.write_deny protects", ErrFence, dest, d)
	}
	return nil
}

// openWriteParent creates (when missing) and opens the directory parent
// (a local path) of the write root wr, refusing, by identity, a parent
// that is or is below a protected directory, or that would create a
// protected place that does not exist yet. The directories that already
// exist are checked before anything is created.
func openWriteParent(wr *os.Root, ws *denySet, root, parent string) (*os.Root, error) {
	existing, missing := ".", ""
	if parent != "." {
		parts := strings.Split(parent, string(filepath.Separator))
		for i := range parts {
			next := filepath.Join(parts[:i+1]...)
			if _, err := wr.Lstat(next); errors.Is(err, fs.ErrNotExist) {
				missing = parts[i]
				break
			} else if err != nil {
				return nil, fenceErr(err)
			}
			existing = next
		}
	}
	er, err := wr.OpenRoot(existing)
	if err != nil {
		return nil, fenceErr(fmt.Errorf("open %s: %w", filepath.Join(root, existing), err))
	}
	err = checkWriteDir(er, ws, filepath.Join(root, existing), missing)
	er.Close()
	if err != nil {
		return nil, err
	}
	if parent != "." {
		if err := wr.MkdirAll(parent, 0o755); err != nil {
			return nil, fenceErr(fmt.Errorf("create %s: %w", filepath.Join(root, parent), err))
		}
	}
	pr, err := wr.OpenRoot(parent)
	if err != nil {
		return nil, fenceErr(fmt.Errorf("open %s: %w", filepath.Join(root, parent), err))
	}
	if err := checkWriteDir(pr, ws, filepath.Join(root, parent), ""); err != nil {
		pr.Close()
		return nil, err
	}
	return pr, nil
}

// checkWriteDir refuses the directory open as d (shown as p) when it or a
// directory above it is protected, or when creating name in it would
// create a protected place.
func checkWriteDir(d *os.Root, ws *denySet, p, name string) error {
	if err := ws.checkChain(d, p); err != nil {
		return err
	}
	if name == "" {
		return nil
	}
	id, err := rootIdent(d)
	if err != nil {
		return err
	}
	if e := ws.byPending(id.id, name); e != "" {
		return ws.refuse(filepath.Join(p, name), e)
	}
	return nil
}

// checkWriteBase refuses replacing or creating base in the parent pr when
// it is protected, by identity or as a place still to be made.
func checkWriteBase(pr *os.Root, ws *denySet, dest, base string) error {
	if id, ok := entryIn(pr, base); ok {
		if d := ws.byIdent(id); d != "" {
			return ws.refuse(dest, d)
		}
	}
	return checkWriteDir(pr, ws, filepath.Dir(dest), base)
}
