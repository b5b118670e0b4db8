package hostfs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
)

// PackOptions says how a host tree is turned into a tar stream for the
// sandbox.
type PackOptions struct {
	// Name is the top entry's name in the stream (the base name of the
	// destination inside the sandbox).
	Name string
	// UID and GID own every entry (the sandbox user).
	UID, GID int
	// IncludeIgnored copies .git directories and .gitignore'd files too.
	IncludeIgnored bool
}

// PackStats says what a pack holds and what it left out.
type PackStats struct {
	Files    int            `json:"files"`
	Dirs     int            `json:"dirs"`
	Symlinks int            `json:"symlinks"`
	Bytes    int64          `json:"bytes"`
	Skipped  map[string]int `json:"skipped,omitempty"` // reason -> count
}

// entry is one file of a plan.
type entry struct {
	rel  string      // slash path below the top, "" for the top itself
	info fs.FileInfo // from Lstat, relative to the directory's handle
	link string      // symlink target
}

// Plan is a host file or tree checked against the fence and the limits,
// ready to stream. Making a plan reads only metadata.
type Plan struct {
	opts    PackOptions
	root    string // the read root the tree is below
	top     string // the tree's path below root (clean, local)
	entries []entry
	deny    *denySet
	Stats   PackStats
}

// readRootFor returns the resolved read root that src (resolved) is at or
// below.
func (f Fence) readRootFor(src string) (string, error) {
	for _, root := range f.ReadRoots {
		r, err := f.resolveRoot(root)
		if err == nil && within(r, src) {
			return r, nil
		}
	}
	return "", fmt.Errorf("%w: %s is not below files.read_roots (%s)", ErrFence, src, strings.Join(f.ReadRoots, ", "))
}

// Plan walks src (already resolved by ReadPath) through an os.Root opened
// on its read root, one directory handle at a time and without following
// symlinks, so what it reads is the tree it checked even if a directory is
// swapped for a link meanwhile. It skips .git and ignored files unless
// asked, files.read_deny, and special files, and refuses (ErrTooBig)
// before anything is sent when the total passes the limits.
func (f Fence) Plan(ctx context.Context, src string, opts PackOptions) (*Plan, error) {
	root, err := f.readRootFor(src)
	if err != nil {
		return nil, err
	}
	top, _ := filepath.Rel(root, src)
	p := &Plan{opts: opts, root: root, top: top, deny: f.readDeny(), Stats: PackStats{Skipped: map[string]int{}}}
	rr, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open read root %s: %w", root, err)
	}
	defer rr.Close()
	parent, err := openPathBeneath(rr, filepath.Dir(top))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, err)
	}
	defer parent.Close()
	// The directory the copy starts from and every one above it, by
	// identity: a second name of a denied directory (a bind mount, another
	// case) is the same directory.
	if err := p.deny.checkChain(parent, filepath.Dir(src)); err != nil {
		return nil, err
	}
	name := filepath.Base(top)
	if top == "." {
		name = "."
	}
	info, err := parent.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src, fenceErr(err))
	}
	w := &planWalk{f: f, p: p, ig: &ignorer{}, deny: p.deny, src: src}
	if err := w.add(ctx, parent, name, "", info); err != nil {
		return nil, err
	}
	if len(p.Stats.Skipped) == 0 {
		p.Stats.Skipped = nil
	}
	sort.Slice(p.entries, func(i, j int) bool { return treeLess(p.entries[i].rel, p.entries[j].rel) })
	return p, nil
}

// treeLess orders slash paths so that a directory's entries follow it
// directly (depth first), which WriteTar's walk relies on.
func treeLess(a, b string) bool {
	return strings.ReplaceAll(a, "/", "\x00") < strings.ReplaceAll(b, "/", "\x00")
}

// planWalk is the state of one Plan's walk.
type planWalk struct {
	f    Fence
	p    *Plan
	ig   *ignorer
	deny *denySet
	src  string
}

func (w *planWalk) skip(reason string) { w.p.Stats.Skipped[reason]++ }

// add plans the entry name of dir (rel below the top, with its Lstat
// info) and, for a directory, everything below it.
func (w *planWalk) add(ctx context.Context, dir *os.Root, name, rel string, info fs.FileInfo) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	abs := filepath.Join(w.src, filepath.FromSlash(rel))
	if keep, err := w.admit(dir, name, rel, abs, info); !keep || err != nil {
		return err
	}
	e := entry{rel: rel, info: info}
	switch {
	case info.Mode().IsRegular():
		w.p.Stats.Files++
		w.p.Stats.Bytes += info.Size()
	case info.IsDir():
		w.p.Stats.Dirs++
	case info.Mode()&fs.ModeSymlink != 0:
		link, err := dir.Readlink(name)
		if err != nil {
			return fmt.Errorf("read link %s: %w", abs, err)
		}
		e.link = link
		w.p.Stats.Symlinks++
	default:
		w.skip("special file")
		return nil
	}
	if len(w.p.entries) >= w.f.maxFiles() {
		return fmt.Errorf("%w: %s has more than %d files; copy a smaller directory", ErrTooBig, w.src, w.f.maxFiles())
	}
	if w.f.MaxBytes > 0 && w.p.Stats.Bytes > w.f.MaxBytes {
		return fmt.Errorf("%w: %s holds more than %d MB (files.max_copy_mb); copy a smaller part", ErrTooBig, w.src, w.f.MaxBytes>>20)
	}
	if !info.IsDir() {
		w.p.entries = append(w.p.entries, e)
		return nil
	}
	return w.addDir(ctx, dir, name, abs, e)
}

// admit reports whether the entry name of dir is planned at all: not when
// a deny entry covers it (the top itself is refused, an error), nor, below
// the top and unless IncludeIgnored, a .git directory or what .gitignore
// leaves out; each entry passed over is counted.
func (w *planWalk) admit(dir *os.Root, name, rel, abs string, info fs.FileInfo) (bool, error) {
	if d := w.denied(dir, name, abs, info); d != "" {
		if rel == "" {
			return false, w.deny.refuse(abs, d)
		}
		w.skip("in files.read_deny")
		return false, nil
	}
	if rel != "" && !w.p.opts.IncludeIgnored {
		if info.IsDir() && info.Name() == ".git" {
			w.skip(".git")
			return false, nil
		}
		if w.ig.ignored(rel, info.IsDir()) {
			w.skip("gitignored")
			return false, nil
		}
	}
	return true, nil
}

// addDir plans the directory entry e (name in dir, at abs), opened
// beneath dir, and everything below it.
func (w *planWalk) addDir(ctx context.Context, dir *os.Root, name, abs string, e entry) error {
	rel, info := e.rel, e.info
	d, err := openDirBeneath(dir, name, info)
	if err != nil {
		return fmt.Errorf("read %s: %w", abs, err)
	}
	defer d.Close()
	// Through the handle: a mount's root (a bind mount of a directory
	// inside a denied one) shows only here.
	if err := w.deny.checkRoot(d, abs); err != nil {
		if rel == "" || !errors.Is(err, ErrFence) {
			return err
		}
		w.p.Stats.Dirs--
		w.skip("in files.read_deny")
		return nil
	}
	w.p.entries = append(w.p.entries, e)
	if !w.p.opts.IncludeIgnored {
		w.ig.load(d, rel)
	}
	names, err := ReadNames(d)
	if err != nil {
		return fmt.Errorf("read %s: %w", abs, err)
	}
	for _, n := range names {
		ci, err := d.Lstat(n)
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the directory was read
		}
		if err != nil {
			return fmt.Errorf("stat %s: %w", filepath.Join(abs, n), err)
		}
		if err := w.add(ctx, d, n, path.Join(rel, n), ci); err != nil {
			return err
		}
	}
	return nil
}

// denied returns the deny entry that the entry name of dir (at abs, with
// its Lstat info) is, by name or by identity; "" if none. Where the info
// holds no identity (Windows), a directory or file is opened to read it.
func (w *planWalk) denied(dir *os.Root, name, abs string, info fs.FileInfo) string {
	if d := w.deny.byName(w.f.lookup(), abs); d != "" {
		return d
	}
	if !info.IsDir() && !info.Mode().IsRegular() {
		return "" // links are copied as links, special files not at all
	}
	id, ok := infoIdent(info)
	if !ok {
		fh, err := dir.OpenFile(name, os.O_RDONLY|openNoBlock, 0)
		if err != nil {
			return "" // the copy opens it again and meets the error
		}
		id, err = handleIdent(fh)
		fh.Close()
		if err != nil {
			return "its identity could not be read"
		}
	}
	return w.deny.byIdent(id)
}

// ReadNames lists a directory through its handle, sorted.
func ReadNames(d *os.Root) ([]string, error) {
	fd, err := d.Open(".")
	if err != nil {
		return nil, err
	}
	defer fd.Close()
	names, err := fd.Readdirnames(-1)
	sort.Strings(names)
	return names, err
}

// WriteTar streams the plan as a tar. It opens every directory and file
// again through the read root, one handle at a time, and checks each is
// the one planned (a swap for a link or another file is refused). A file
// that grew since the plan is cut at its planned size and one that shrank
// is an error, so the stream never exceeds what was checked.
func (p *Plan) WriteTar(ctx context.Context, w io.Writer) error {
	rr, err := os.OpenRoot(p.root)
	if err != nil {
		return fmt.Errorf("open read root %s: %w", p.root, err)
	}
	defer rr.Close()
	parent, err := openPathBeneath(rr, filepath.Dir(p.top))
	if err != nil {
		return err
	}
	if err := p.deny.checkChain(parent, filepath.Join(p.root, filepath.Dir(p.top))); err != nil {
		parent.Close()
		return err
	}
	topName := filepath.Base(p.top)
	if p.top == "." {
		topName = "."
	}
	// dirs is the chain of open directories from the top's parent down to
	// the current entry's parent; rels their paths below the top.
	dirs := []*os.Root{parent}
	rels := []string{"\x00parent"}
	defer func() {
		for _, d := range dirs {
			d.Close()
		}
	}()
	tw := tar.NewWriter(w)
	for _, e := range p.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		// Climb to the entry's parent: pop what is not an ancestor.
		want := path.Dir(e.rel)
		if e.rel == "" {
			want = "\x00parent"
		} else if want == "." {
			want = ""
		}
		for len(dirs) > 1 && rels[len(rels)-1] != want {
			dirs[len(dirs)-1].Close()
			dirs, rels = dirs[:len(dirs)-1], rels[:len(rels)-1]
		}
		if rels[len(rels)-1] != want {
			return fmt.Errorf("copy %s: the tree changed while it was copied", p.opts.Name)
		}
		dir := dirs[len(dirs)-1]
		name := topName
		if e.rel != "" {
			name = path.Base(e.rel)
		}
		if err := p.writeEntry(tw, dir, name, e); err != nil {
			return err
		}
		if e.info.IsDir() {
			d, err := openDirBeneath(dir, name, e.info)
			if err != nil {
				return err
			}
			if err := p.deny.checkRoot(d, path.Join(p.opts.Name, e.rel)); err != nil {
				d.Close()
				return err
			}
			dirs, rels = append(dirs, d), append(rels, e.rel)
		}
	}
	return tw.Close()
}

// writeEntry writes e's header and, for a file, its bytes.
func (p *Plan) writeEntry(tw *tar.Writer, dir *os.Root, name string, e entry) error {
	tarName := p.opts.Name
	if e.rel != "" {
		tarName = path.Join(p.opts.Name, e.rel)
	}
	h := &tar.Header{Name: tarName, ModTime: e.info.ModTime(), Uid: p.opts.UID, Gid: p.opts.GID, Format: tar.FormatPAX}
	mode := e.info.Mode()
	switch {
	case mode.IsDir():
		h.Typeflag, h.Name, h.Mode = tar.TypeDir, tarName+"/", 0o755
	case mode&fs.ModeSymlink != 0:
		h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
	default:
		// Keep the owner's execute bit (scripts); drop setuid and co.
		h.Typeflag, h.Size, h.Mode = tar.TypeReg, e.info.Size(), 0o644
		if mode.Perm()&0o100 != 0 {
			h.Mode = 0o755
		}
	}
	if err := tw.WriteHeader(h); err != nil {
		return err
	}
	if h.Typeflag != tar.TypeReg {
		return nil
	}
	f, err := openFileBeneath(dir, name, e.info)
	if err != nil {
		return fmt.Errorf("read %s: %w", tarName, err)
	}
	defer f.Close()
	// The handle the bytes come from, by identity: what was planned could
	// have been swapped for a hard link to a denied file since.
	if err := p.deny.checkFile(f, tarName); err != nil {
		return err
	}
	n, err := io.Copy(tw, io.LimitReader(f, h.Size))
	if err != nil {
		return fmt.Errorf("read %s: %w", tarName, err)
	}
	if n != h.Size {
		return fmt.Errorf("read %s: the file shrank while it was copied", tarName)
	}
	return nil
}
