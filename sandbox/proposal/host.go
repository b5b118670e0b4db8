package proposal

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// hostSide reads the host's side of a proposal through the fence: every
// directory and file opened one handle at a time below host_path's
// parent, no symlink followed, both deny lists checked by identity.
type hostSide struct {
	g       *hostfs.ApplyGuard
	real    string   // host_path, resolved
	tree    bool     // host_path is (or becomes) a directory
	parent  *os.Root // host_path's parent directory
	base    string
	root    *os.Root // host_path itself, when a directory that exists
	maxFile int64
}

// openHost opens host_path's parent and, for a tree, host_path.
func openHost(g *hostfs.ApplyGuard, real string, tree bool, maxFile int64) (*hostSide, error) {
	parent, err := os.OpenRoot(filepath.Dir(real))
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", filepath.Dir(real), err)
	}
	h := &hostSide{g: g, real: real, tree: tree, parent: parent, base: filepath.Base(real), maxFile: maxFile}
	info, err := parent.Lstat(h.base)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return h, nil
	case err != nil:
		h.close()
		return nil, err
	case tree && !info.IsDir():
		h.close()
		return nil, fmt.Errorf("%w: host_path %s is not a directory but the sandbox path is; name a directory, or a file in the sandbox", hostfs.ErrFence, real)
	case !tree && !info.Mode().IsRegular():
		h.close()
		return nil, fmt.Errorf("%w: host_path %s is not a regular file but the sandbox path is a file; name the file itself", hostfs.ErrFence, real)
	case tree:
		if h.root, err = g.OpenDir(parent, filepath.Dir(real), h.base); err != nil {
			h.close()
			return nil, err
		}
	}
	return h, nil
}

func (h *hostSide) close() {
	if h.root != nil {
		h.root.Close()
	}
	h.parent.Close()
}

// abs is the host path of rel.
func (h *hostSide) abs(rel string) string {
	if rel == "" {
		return h.real
	}
	return filepath.Join(h.real, filepath.FromSlash(rel))
}

// read returns the host file rel's content and mode; nil content when
// there is none; errInTheWay when a symlink or special file stands there.
func (h *hostSide) read(rel string) ([]byte, fs.FileMode, error) {
	if err := h.g.CheckName(h.abs(rel)); err != nil {
		return nil, 0, err
	}
	dir, name := h.parent, h.base
	if h.tree {
		if h.root == nil {
			return nil, 0, nil
		}
		d, err := h.g.OpenDir(h.root, h.real, dirOf(rel))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, 0, nil
		}
		if err != nil {
			return nil, 0, inTheWay(err)
		}
		defer d.Close()
		dir, name = d, path.Base(rel)
	}
	return h.readIn(dir, name, h.abs(rel))
}

func (h *hostSide) readIn(dir *os.Root, name, abs string) ([]byte, fs.FileMode, error) {
	fh, info, err := h.g.OpenFile(dir, name, abs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, inTheWay(err)
	}
	defer fh.Close()
	if info.Size() > h.maxFile {
		return nil, 0, fmt.Errorf("%w: host file %s is %d bytes, more than the %d a proposal compares; propose a smaller path", ErrTooBig, abs, info.Size(), h.maxFile)
	}
	b, err := io.ReadAll(io.LimitReader(fh, h.maxFile+1))
	if err != nil {
		return nil, 0, fmt.Errorf("read %s: %w", abs, err)
	}
	if int64(len(b)) > h.maxFile {
		return nil, 0, fmt.Errorf("%w: host file %s grew past %d bytes; try again", ErrTooBig, abs, h.maxFile)
	}
	return b, info.Mode(), nil
}

// walk calls fn for every regular file below host_path that copy_in
// would have copied: not .git, not ignored by .gitignore, not in a deny
// list (those never reached the sandbox, so they are never proposed for
// deletion); symlinks and special files are left alone. At most max
// entries are looked at.
func (h *hostSide) walk(max int, fn func(rel string, content []byte) error) error {
	if h.root == nil {
		return nil
	}
	n := 0
	ig := &hostfs.Ignorer{}
	return h.walkDir(h.root, "", ig, &n, max, fn)
}

func (h *hostSide) walkDir(d *os.Root, rel string, ig *hostfs.Ignorer, n *int, max int, fn func(string, []byte) error) error {
	ig.Load(d, rel)
	names, err := hostfs.ReadNames(d)
	if err != nil {
		return fmt.Errorf("list %s: %w", h.abs(rel), err)
	}
	for _, name := range names {
		if *n++; *n > max {
			return fmt.Errorf("%w: the host directory has more than %d entries; propose a smaller directory, or without delete", ErrTooBig, max)
		}
		r := path.Join(rel, name)
		info, err := d.Lstat(name)
		if err != nil || ig.Ignored(r, info.IsDir()) || h.g.CheckName(h.abs(r)) != nil {
			continue
		}
		switch {
		case info.IsDir() && name != ".git":
			sub, err := h.g.OpenDir(d, h.abs(rel), name)
			if err != nil {
				continue // denied or swapped: never proposed for deletion
			}
			err = h.walkDir(sub, r, ig, n, max, fn)
			sub.Close()
			if err != nil {
				return err
			}
		case info.Mode().IsRegular():
			b, _, err := h.readIn(d, name, h.abs(r))
			if errors.Is(err, errInTheWay) || errors.Is(err, hostfs.ErrDenied) || b == nil && err == nil {
				continue
			}
			if err != nil {
				return err
			}
			if err := fn(r, b); err != nil {
				return err
			}
		}
	}
	return nil
}
