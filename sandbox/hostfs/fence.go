package hostfs

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// ErrFence is wrapped by every refusal: the path is outside what the
// policy allows, or the operation would cross the fence.
var ErrFence = errors.New("outside the allowed host paths")

// ErrTooBig is wrapped when a copy exceeds files.max_copy_mb or the file
// count limit.
var ErrTooBig = errors.New("copy too large")

// ErrExists is wrapped when copy_out would overwrite without overwrite: true.
var ErrExists = errors.New("destination exists")

// Fence holds the host-side policy.
type Fence struct {
	// ReadRoots are the directories copy_in may read below ("~" allowed).
	ReadRoots []string
	// Deny are paths below the roots that are never read, nor copied as
	// part of a directory ("~" allowed): compared by identity (what the
	// file is) and by name.
	Deny []string
	// WriteDeny are paths copy_out never writes, replaces or creates,
	// whatever the write root ("~" allowed; "$PATH" stands for every
	// directory of the PATH environment variable).
	WriteDeny []string
	// WriteRoot is the directory copy_out writes below ("~" allowed).
	WriteRoot string
	// MaxBytes bounds the bytes of one copy; MaxFiles its entries.
	MaxBytes int64
	MaxFiles int
	// Home is the user's home directory for "~"; empty: os.UserHomeDir.
	Home string

	// names is how volumes spell names; nil: ask the file system.
	names nameLookup
}

// DefaultMaxFiles bounds the entries of one copy when Fence.MaxFiles is 0.
const DefaultMaxFiles = 20000

func (f Fence) maxFiles() int {
	if f.MaxFiles > 0 {
		return f.MaxFiles
	}
	return DefaultMaxFiles
}

func (f Fence) expand(p string) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") || strings.HasPrefix(p, `~\`) {
		home := f.Home
		if home == "" {
			h, err := os.UserHomeDir()
			if err != nil {
				return "", fmt.Errorf("find home directory: %w", err)
			}
			home = h
		}
		p = filepath.Join(home, p[1:])
	}
	return p, nil
}

// checkName refuses names no legitimate tool call needs and that confuse
// people and programs: NUL, line breaks, other control characters.
func checkName(p string) error {
	if len(p) > 4096 {
		return fmt.Errorf("%w: path longer than 4096 bytes", ErrFence)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: path %q holds a control character (such as a line break)", ErrFence, p)
		}
	}
	return nil
}

// within reports whether p is root or below it (both clean and absolute).
func within(root, p string) bool {
	if root == p {
		return true
	}
	if filepath.Separator == '/' && !strings.HasPrefix(p, root) {
		return false // cheap: no Rel for the common miss (Windows' Rel ignores case)
	}
	rel, err := filepath.Rel(root, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// resolveRoot returns a root's absolute path with symlinks resolved (a root
// that does not exist yet keeps its lexical form).
func (f Fence) resolveRoot(root string) (string, error) {
	r, err := f.expand(root)
	if err != nil {
		return "", err
	}
	r, err = filepath.Abs(r)
	if err != nil {
		return "", err
	}
	if rr, err := filepath.EvalSymlinks(r); err == nil {
		return rr, nil
	}
	return filepath.Clean(r), nil
}

// absolute is host path p as a tool call gave it, with "~" expanded; a
// name that cannot be a path, or a relative path, is refused.
func (f Fence) absolute(p string) (string, error) {
	if err := checkName(p); err != nil {
		return "", err
	}
	p, err := f.expand(p)
	if err != nil {
		return "", err
	}
	if !filepath.IsAbs(p) {
		return "", fmt.Errorf("%w: host_path %q is relative; give an absolute path or one starting with ~", ErrFence, p)
	}
	return p, nil
}

// ReadPath resolves a host path a tool call wants to copy in: "~" is
// expanded, a relative path is refused (relative to what?), symlinks are
// resolved, and the result must lie below one of the read roots.
func (f Fence) ReadPath(p string) (string, error) {
	p, err := f.absolute(p)
	if err != nil {
		return "", err
	}
	// By name first, as asked: another spelling of a denied place on a
	// volume that ignores case or has short names is refused before
	// anything is looked up.
	deny := f.readDeny()
	if d := deny.byName(f.lookup(), filepath.Clean(p)); d != "" {
		return "", fmt.Errorf("%w: %s is in %s, which files.read_deny keeps from the sandbox", ErrFence, p, d)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(p))
	if err != nil {
		if !f.belowReadRoot(filepath.Clean(p)) {
			return "", fmt.Errorf("%w: %s is not below files.read_roots (%s)", ErrFence, p, strings.Join(f.ReadRoots, ", "))
		}
		if errors.Is(err, os.ErrNotExist) {
			return "", fmt.Errorf("host path %s does not exist: %w", p, err)
		}
		return "", fmt.Errorf("resolve host path %s: %w", p, err)
	}
	if d := deny.byName(f.lookup(), real); d != "" {
		return "", fmt.Errorf("%w: %s leads to %s, in %s, which files.read_deny keeps from the sandbox", ErrFence, p, real, d)
	}
	if err := deny.checkPath(real); err != nil {
		return "", err
	}
	if f.belowReadRoot(real) {
		return real, nil
	}
	if real != filepath.Clean(p) {
		return "", fmt.Errorf("%w: %s leads to %s, which is not below files.read_roots (%s)", ErrFence, p, real, strings.Join(f.ReadRoots, ", "))
	}
	return "", fmt.Errorf("%w: %s is not below files.read_roots (%s); add a root to the config to allow it", ErrFence, p, strings.Join(f.ReadRoots, ", "))
}

// denyRule is an entry of a deny list with its names: as written
// (expanded), resolved, with short names expanded; fold when its volume
// ignores case.
type denyRule struct {
	entry, lex, real, long string
	fold                   bool
}

// readDeny resolves Fence.Deny for one call.
func (f Fence) readDeny() *denySet { return f.newDenySet("files.read_deny", f.Deny) }

// writeDeny resolves Fence.WriteDeny for one call, "$PATH" as the
// directories of PATH.
func (f Fence) writeDeny() *denySet {
	var entries []string
	for _, d := range f.WriteDeny {
		if d != "$PATH" {
			entries = append(entries, d)
			continue
		}
		for _, dir := range filepath.SplitList(os.Getenv("PATH")) {
			if filepath.IsAbs(dir) {
				entries = append(entries, dir)
			}
		}
	}
	return f.newDenySet("files.write_deny", entries)
}

// belowReadRoot reports whether p (absolute, clean) is below a read root.
func (f Fence) belowReadRoot(p string) bool {
	for _, root := range f.ReadRoots {
		r, err := f.resolveRoot(root)
		if err != nil {
			continue
		}
		if within(r, p) {
			return true
		}
	}
	return false
}

// WritePath resolves where copy_out writes: p relative to the write root,
// or absolute inside it; "" means def (also relative to the root). The
// root is created (0700) if missing. Every existing ancestor of the result
// inside the root must be a real directory, not a symlink, so nothing is
// written through a link to elsewhere.
func (f Fence) WritePath(p, def string) (root, dest string, err error) {
	if p == "" {
		p = def
	}
	if err := checkName(p); err != nil {
		return "", "", err
	}
	rootLex, err := f.expand(f.WriteRoot)
	if err != nil {
		return "", "", err
	}
	if rootLex, err = filepath.Abs(rootLex); err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(rootLex, 0o700); err != nil {
		return "", "", fmt.Errorf("create files.write_root %s: %w", rootLex, err)
	}
	root, err = filepath.EvalSymlinks(rootLex)
	if err != nil {
		return "", "", fmt.Errorf("resolve files.write_root: %w", err)
	}
	p, err = f.expand(p)
	if err != nil {
		return "", "", err
	}
	switch {
	case filepath.IsAbs(p):
		dest = filepath.Clean(p)
		// An absolute path may name the root by its link or its target.
		if within(rootLex, dest) {
			rel, _ := filepath.Rel(rootLex, dest)
			dest = filepath.Join(root, rel)
		}
	default:
		dest = filepath.Join(root, p)
	}
	if !within(root, dest) || dest == root {
		return "", "", fmt.Errorf("%w: host_path %q is outside files.write_root (%s); give a path inside it", ErrFence, p, root)
	}
	// Walk the ancestors inside the root: each must be a directory or not
	// exist yet.
	rel, _ := filepath.Rel(root, filepath.Dir(dest))
	cur := root
	if rel != "." {
		for _, part := range strings.Split(rel, string(filepath.Separator)) {
			cur = filepath.Join(cur, part)
			st, err := os.Lstat(cur)
			if errors.Is(err, os.ErrNotExist) {
				break
			}
			if err != nil {
				return "", "", err
			}
			if st.Mode()&os.ModeSymlink != 0 {
				return "", "", fmt.Errorf("%w: %s is a symlink; copy_out does not write through links", ErrFence, cur)
			}
			if !st.IsDir() {
				return "", "", fmt.Errorf("%w: %s is not a directory", ErrFence, cur)
			}
		}
	}
	return root, dest, nil
}
