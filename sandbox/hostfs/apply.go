package hostfs

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A proposal (propose_changes) changes the user's own files in place, so
// it passes both fences: what it shows of a host file is read as copy_in
// reads (files.read_deny), and what it writes is written as copy_out
// writes (files.write_deny), by identity, through handles, with no symlink
// followed below the proposal's host_path.

// ApplyPath resolves the host_path of a proposal: "~" expanded, absolute,
// symlinks of the path itself resolved, below one of roots
// (files.apply_roots), and neither it nor anything above it in a deny
// list. It may not exist yet; its parent must.
func (f Fence) ApplyPath(p string, roots []string) (string, error) {
	p, err := f.absolute(p)
	if err != nil {
		return "", err
	}
	p = filepath.Clean(p)
	g := f.ApplyGuard()
	if err := g.CheckName(p); err != nil {
		return "", err
	}
	real, err := filepath.EvalSymlinks(p)
	if errors.Is(err, fs.ErrNotExist) {
		var dir string
		if dir, err = filepath.EvalSymlinks(filepath.Dir(p)); err == nil {
			real = filepath.Join(dir, filepath.Base(p))
		}
	}
	if err != nil {
		return "", fmt.Errorf("resolve host_path %s: %w; give a path whose parent directory exists", p, err)
	}
	if err := g.CheckName(real); err != nil {
		return "", err
	}
	if !f.below(roots, real) {
		return "", fmt.Errorf("%w: %s is not below files.apply_roots (%s); add a root to the config to allow it", ErrFence, real, strings.Join(roots, ", "))
	}
	for _, s := range []*denySet{g.read, g.write} {
		at := real
		if _, err := os.Lstat(real); err != nil {
			at = filepath.Dir(real)
		}
		if err := s.checkPath(at); err != nil {
			return "", denied(err)
		}
	}
	return real, nil
}

func (f Fence) below(roots []string, p string) bool {
	for _, root := range roots {
		if r, err := f.resolveRoot(root); err == nil && within(r, p) {
			return true
		}
	}
	return false
}

// ApplyGuard holds both deny lists, resolved for one proposal.
type ApplyGuard struct {
	f           Fence
	read, write *denySet
}

// ApplyGuard resolves files.read_deny and files.write_deny for one
// proposal.
func (f Fence) ApplyGuard() *ApplyGuard {
	return &ApplyGuard{f: f, read: f.readDeny(), write: f.writeDeny()}
}

// CheckName refuses p (absolute, clean) when a deny list names it or a
// directory above it.
func (g *ApplyGuard) CheckName(p string) error {
	if d := g.write.byName(g.f.lookup(), p); d != "" {
		return denied(fmt.Errorf("%w: %s is in %s, which files.write_deny protects: a proposal never changes it; propose a path elsewhere, or copy_out the file for the person to place", ErrFence, p, d))
	}
	if d := g.read.byName(g.f.lookup(), p); d != "" {
		return denied(fmt.Errorf("%w: %s is in %s, which files.read_deny keeps from the sandbox; propose a path elsewhere", ErrFence, p, d))
	}
	return nil
}

// OpenDir opens rel (a clean local path of directories) below r one
// directory at a time, following no symlink, and refuses a directory that
// is, or is inside, a denied one by identity.
func (g *ApplyGuard) OpenDir(r *os.Root, rootPath, rel string) (*os.Root, error) {
	d, err := openPathBeneath(r, rel)
	if err != nil {
		return nil, err
	}
	p := filepath.Join(rootPath, rel)
	for _, s := range []*denySet{g.read, g.write} {
		if err := s.checkChain(d, p); err != nil {
			d.Close()
			return nil, denied(err)
		}
	}
	return d, nil
}

// OpenFile opens the regular file name of d for reading, following no
// symlink (a symlink, FIFO or device is refused with ErrFence), and
// refuses it when it is denied by identity. p shows it in messages.
func (g *ApplyGuard) OpenFile(d *os.Root, name, p string) (*os.File, fs.FileInfo, error) {
	info, err := d.Lstat(name)
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%w: %s is not a regular file (%s); a proposal changes regular files only", ErrFence, p, info.Mode().Type())
	}
	fh, err := openFileBeneath(d, name, info)
	if err != nil {
		return nil, nil, err
	}
	for _, s := range []*denySet{g.read, g.write} {
		if err := s.checkFile(fh, p); err != nil {
			fh.Close()
			return nil, nil, denied(err)
		}
	}
	return fh, info, nil
}

// WriteDir creates (when missing) and opens parent, a local path below
// r (open on rootPath), for writing into: no symlink followed, and
// neither it nor a directory above it protected by files.write_deny.
func (g *ApplyGuard) WriteDir(r *os.Root, rootPath, parent string) (*os.Root, error) {
	d, err := openWriteParent(r, g.write, rootPath, parent)
	if err != nil && strings.Contains(err.Error(), "protects") {
		return nil, denied(err)
	}
	return d, err
}

// CheckWrite refuses replacing, creating or removing base in the
// directory pr (dest is its full path) when files.write_deny protects it,
// by name or identity.
func (g *ApplyGuard) CheckWrite(pr *os.Root, dest, base string) error {
	if err := g.f.checkWriteName(g.write, dest); err != nil {
		return denied(err)
	}
	return denied(checkWriteBase(pr, g.write, dest, base))
}

// Ignorer answers "would copy_in have left this out?" from the
// .gitignore files of a host tree, so that a proposal with delete does not
// delete what never reached the sandbox.
type Ignorer struct{ ig ignorer }

// Load adds the .gitignore of the directory open as d (relDir: slash path
// below the tree's top, "" for the top); outer directories first.
func (i *Ignorer) Load(d *os.Root, relDir string) { i.ig.load(d, relDir) }

// Ignored reports whether rel (slash path below the top) is ignored.
func (i *Ignorer) Ignored(rel string, isDir bool) bool { return i.ig.ignored(rel, isDir) }

// ErrDenied is wrapped (with ErrFence) by an ApplyGuard refusal that a
// deny list makes, as opposed to a symlink or special file in the way.
var ErrDenied = errors.New("denied")

type deniedError struct{ err error }

func (e deniedError) Error() string   { return e.err.Error() }
func (e deniedError) Unwrap() []error { return []error{e.err, ErrDenied} }

func denied(err error) error {
	if err == nil {
		return nil
	}
	return deniedError{err}
}
