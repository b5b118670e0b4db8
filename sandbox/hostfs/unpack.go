package hostfs

import (
	"archive/tar"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// ErrEmptyArchive is returned when the stream holds no entry at all (the
// producer's own error, if any, says more).
var ErrEmptyArchive = errors.New("the sandbox returned an empty archive")

// UnpackOptions says how a tar stream from a sandbox lands on the host.
type UnpackOptions struct {
	// Overwrite replaces an existing destination (file or directory).
	Overwrite bool
	// Links makes the archive's symlinks whose target, resolved on the
	// host inside the copied tree (following the tree's other links),
	// stays inside it. Off (the default), no symlink is made on the host
	// and every one is listed in UnpackStats.SkippedLinks.
	Links bool
}

// SkippedLink is a symlink of the archive that was not made on the host.
type SkippedLink struct {
	// Path is the link's place in the copy, relative to the write root's
	// destination (the copied file or directory's own name first).
	Path string `json:"path"`
	// Target is where the link pointed in the sandbox, as written there.
	Target string `json:"target"`
	// Reason says why it was not made.
	Reason string `json:"reason"`
}

// maxSkippedLinks bounds the list of skipped links in a result; the rest
// are counted in Skipped.
const maxSkippedLinks = 200

// UnpackStats says what was written and what was refused.
type UnpackStats struct {
	Files        int            `json:"files"`
	Dirs         int            `json:"dirs"`
	Symlinks     int            `json:"symlinks"`
	Bytes        int64          `json:"bytes"`
	Skipped      map[string]int `json:"skipped,omitempty"`
	SkippedLinks []SkippedLink  `json:"skipped_links,omitempty"`
}

func (st *UnpackStats) skipLink(p, target, reason string) {
	st.Skipped["symlink not made on the host"]++
	if len(st.SkippedLinks) < maxSkippedLinks {
		st.SkippedLinks = append(st.SkippedLinks, SkippedLink{Path: p, Target: target, Reason: reason})
	}
}

// Unpack extracts a tar stream of one sandbox file or directory to dest, a
// path below root (both from WritePath). The stream is hostile: every
// host-side operation goes through an os.Root opened on the write root, so
// the kernel keeps each step beneath it whatever the archive or a
// concurrent change on disk does (no path is checked and then walked
// again by name). Everything is written into a staging directory beside
// dest, inside the same root, and moved into place at the end, so a
// failure (a limit, a broken stream, a cancelled call) leaves nothing
// behind. No file gets an executable bit; devices, FIFOs and hard links
// are skipped; symlinks are made only with UnpackOptions.Links, and then
// only those that resolve inside the copy.
func (f Fence) Unpack(ctx context.Context, r io.Reader, root, dest string, opts UnpackOptions) (st UnpackStats, err error) {
	st.Skipped = map[string]int{}
	defer func() {
		if len(st.Skipped) == 0 {
			st.Skipped = nil
		}
	}()
	rel, err := filepath.Rel(root, dest)
	if err != nil || rel == "." || !filepath.IsLocal(rel) {
		return st, fmt.Errorf("%w: %s is not below the write root %s", ErrFence, dest, root)
	}
	ws := f.writeDeny()
	if err := f.checkWriteName(ws, dest); err != nil {
		return st, err
	}
	wr, err := os.OpenRoot(root)
	if err != nil {
		return st, fmt.Errorf("open files.write_root: %w", err)
	}
	defer wr.Close()
	parent, base := filepath.Dir(rel), filepath.Base(rel)
	// Everything below happens relative to the parent directory's handle:
	// renaming or replacing the parent's path from now on changes nothing.
	// It, every directory above it and the name written are checked
	// against files.write_deny by identity, through that handle.
	pr, err := openWriteParent(wr, ws, root, parent)
	if err != nil {
		return st, err
	}
	defer pr.Close()
	if err := checkWriteBase(pr, ws, dest, base); err != nil {
		return st, err
	}
	if _, err := pr.Lstat(base); err == nil {
		if !opts.Overwrite {
			return st, fmt.Errorf("%w: %s already exists; pass overwrite: true to replace it", ErrExists, dest)
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return st, fenceErr(err)
	}
	staging := ".mcp-sandbox-copy-" + randomHex()
	if err := pr.Mkdir(staging, 0o700); err != nil {
		return st, fmt.Errorf("create staging directory: %w", err)
	}
	defer removeStaging(pr, staging)
	sr, err := pr.OpenRoot(staging)
	if err != nil {
		return st, fmt.Errorf("open staging directory: %w", err)
	}
	defer sr.Close()

	if n := f.streamLimit(); n > 0 {
		r = &boundedReader{r: r, left: n}
	}
	links, err := f.extract(ctx, tar.NewReader(r), sr, &st)
	if err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := makeLinks(sr, base, links, opts.Links, &st); err != nil {
		return st, err
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := replace(pr, staging, base, dest, opts.Overwrite); err != nil {
		return st, err
	}
	return st, nil
}

// maxLinkBytes bounds the names and targets of the symlinks one copy
// keeps until its files are written.
const maxLinkBytes = 4 << 20

// link is a symlink of the archive: where it goes (slash path below the
// copied tree's top) and its target as written.
type link struct{ rel, target string }

// keepLink adds l to links unless it breaks the bounds: the links are kept
// until the tree is written, so their names and targets are counted first
// (*kept so far; a target can be 1 MiB in a tar stream, and there can be
// maxFiles links). What is not kept is counted in st.Skipped.
func keepLink(links []link, kept *int, l link, st *UnpackStats) []link {
	*kept += len(l.rel) + len(l.target)
	switch {
	case len(l.target) > 4096:
		st.Skipped["symlink with a target longer than 4096 bytes"]++
	case *kept > maxLinkBytes:
		st.Skipped["symlink past the 4 MiB of link names kept"]++
	default:
		links = append(links, l)
	}
	return links
}

// extract writes the archive's directories and files below "top" in the
// staging root and returns its symlinks, made by none.
func (f Fence) extract(ctx context.Context, tr *tar.Reader, sr *os.Root, st *UnpackStats) ([]link, error) {
	var links []link
	first := true
	var topName string
	maxFiles := f.maxFiles()
	entries := 0 // skipped ones too: they cost time as well
	linkBytes := 0
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read the sandbox's archive: %w", err)
		}
		if err := checkName(h.Name); err != nil {
			return nil, err
		}
		// Clean against a root so ".." cannot climb; "/", "." and ".."
		// all clean to the root itself, which is the empty name.
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if first {
			first = false
			topName = name
			if strings.Contains(topName, "/") || topName == "" {
				return nil, fmt.Errorf("%w: unexpected archive layout (%q)", ErrFence, h.Name)
			}
			if h.Typeflag == tar.TypeSymlink {
				return nil, fmt.Errorf("%w: %s is a symlink (to %s); copy_out does not follow links, copy the file it points to instead", ErrFence, topName, h.Linkname)
			}
		}
		rel, at, err := place(h, name, topName)
		if err != nil {
			return nil, err
		}
		if entries >= maxFiles {
			return nil, fmt.Errorf("%w: more than %d entries", ErrTooBig, maxFiles)
		}
		entries++
		switch h.Typeflag {
		case tar.TypeDir:
			if err := sr.MkdirAll(at, 0o755); err != nil {
				return nil, fenceErr(fmt.Errorf("create %s: %w", rel, err))
			}
			st.Dirs++
		case tar.TypeReg:
			if f.MaxBytes > 0 && st.Bytes+h.Size > f.MaxBytes {
				return nil, fmt.Errorf("%w: more than %d MB (files.max_copy_mb)", ErrTooBig, f.MaxBytes>>20)
			}
			if err := writeRegular(sr, at, tr, h.Size); err != nil {
				return nil, err
			}
			st.Files++
			st.Bytes += h.Size
		case tar.TypeSymlink:
			if rel == "" {
				return nil, fmt.Errorf("%w: archive entry %q replaces the copied tree with a link", ErrFence, h.Name)
			}
			links = keepLink(links, &linkBytes, link{rel: rel, target: h.Linkname}, st)
		case tar.TypeLink:
			st.Skipped["hard link"]++
		default:
			st.Skipped["device or special file"]++
		}
	}
	if first {
		return nil, ErrEmptyArchive
	}
	return links, nil
}

// place checks where the archive entry h (its name cleaned to name)
// goes, below the copied tree named top, and returns its path below top
// (rel, slash-separated, "" for top itself) and its place in the staging
// root (at).
func place(h *tar.Header, name, top string) (rel, at string, err error) {
	rel, ok := strings.CutPrefix(name, top)
	if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
		return "", "", fmt.Errorf("%w: archive entry %q is outside the copied tree", ErrFence, h.Name)
	}
	rel = strings.TrimPrefix(rel, "/")
	at = "top"
	if rel != "" {
		at = filepath.Join("top", filepath.FromSlash(rel))
		if !filepath.IsLocal(at) || strings.ContainsAny(rel, `\:`) && filepath.Separator == '\\' {
			return "", "", fmt.Errorf("%w: archive entry %q is not a plain name on this system", ErrFence, h.Name)
		}
	}
	return rel, at, nil
}

// makeLinks makes, when allowed, the symlinks whose target resolves inside
// the copied tree, and lists the others. The test is physical, not
// textual: every link is made inside an os.Root on the tree's top, and one
// that the kernel-enforced walk cannot resolve beneath it (through the
// tree's other links, "..", an absolute target) is removed again, until
// none is left that leaves the tree or dangles.
func makeLinks(sr *os.Root, top string, links []link, allowed bool, st *UnpackStats) error {
	if len(links) == 0 {
		return nil
	}
	shown := func(rel string) string { return path.Join(top, rel) }
	if !allowed {
		for _, l := range links {
			st.skipLink(shown(l.rel), l.target, "copy_out makes no symlinks on the host (files.copy_out_links is off)")
		}
		return nil
	}
	tr, err := sr.OpenRoot("top")
	if err != nil {
		return fmt.Errorf("open the staged copy: %w", err)
	}
	defer tr.Close()
	var made []link
	for _, l := range links {
		target := l.target
		if target == "" || path.IsAbs(target) || strings.ContainsAny(target, `\:`) {
			st.skipLink(shown(l.rel), l.target, "absolute or not a plain relative target")
			continue
		}
		if err := tr.Symlink(filepath.FromSlash(target), filepath.FromSlash(l.rel)); err != nil {
			// Windows without the privilege to make links, or a name taken
			// by a file of the archive.
			st.skipLink(shown(l.rel), l.target, "could not be created: "+err.Error())
			continue
		}
		made = append(made, l)
	}
	for changed := true; changed; {
		changed = false
		kept := made[:0]
		for _, l := range made {
			if _, err := tr.Stat(filepath.FromSlash(l.rel)); err != nil {
				if rerr := tr.Remove(filepath.FromSlash(l.rel)); rerr != nil {
					return fmt.Errorf("remove link %s again: %w", l.rel, rerr)
				}
				st.skipLink(shown(l.rel), l.target, "resolves outside the copy, or to nothing")
				changed = true
				continue
			}
			kept = append(kept, l)
		}
		made = kept
	}
	st.Symlinks = len(made)
	return nil
}

// writeRegular creates a new file (never through an existing name) with
// mode 0644 and exactly size bytes from r, inside sr.
func writeRegular(sr *os.Root, at string, r io.Reader, size int64) error {
	if dir := filepath.Dir(at); dir != "." {
		if err := sr.MkdirAll(dir, 0o755); err != nil {
			return fenceErr(fmt.Errorf("create %s: %w", dir, err))
		}
	}
	w, err := sr.OpenFile(at, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fenceErr(fmt.Errorf("write %s: %w", at, err))
	}
	n, err := io.Copy(w, io.LimitReader(r, size))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err == nil && n != size {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", at, err)
	}
	return nil
}

// replace moves the staged tree (staging/top) to base, both in pr. With
// overwrite an existing base is moved aside first, and removed with the
// staging directory once the new one is in place. Without it, a file is
// put in place with a hard link, which fails if the name was taken in the
// meantime, and a directory with a rename, which cannot replace a
// non-empty directory.
func replace(pr *os.Root, staging, base, dest string, overwrite bool) error {
	staged := filepath.Join(staging, "top")
	if _, err := pr.Lstat(base); err == nil {
		if !overwrite {
			return fmt.Errorf("%w: %s appeared while copying", ErrExists, dest)
		}
		old := filepath.Join(staging, "old")
		if err := pr.Rename(base, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", dest, err)
		}
		if err := pr.Rename(staged, base); err != nil {
			_ = pr.Rename(old, base)
			return fmt.Errorf("put %s in place: %w", dest, err)
		}
		return nil
	}
	info, err := pr.Lstat(staged)
	if err != nil {
		return err
	}
	if info.Mode().IsRegular() {
		err := pr.Link(staged, base)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, fs.ErrExist):
			return fmt.Errorf("%w: %s appeared while copying", ErrExists, dest)
		}
		// A file system without hard links: a rename is next best.
	}
	if err := pr.Rename(staged, base); err != nil {
		if errors.Is(err, fs.ErrExist) || strings.Contains(err.Error(), "not empty") {
			return fmt.Errorf("%w: %s appeared while copying", ErrExists, dest)
		}
		return fmt.Errorf("put %s in place: %w", dest, err)
	}
	return nil
}

// perEntry is what an archive's entry may take beyond its file's content
// (header, long-name and PAX records, padding): a real archive's take far
// less.
const perEntry = 8 << 10

// streamLimit bounds the whole archive, not only its files' contents: a
// hostile stream could otherwise send entries that are skipped (devices,
// long PAX records, data on entries of an unknown type) for ever. It is 0,
// no bound, when MaxBytes is.
func (f Fence) streamLimit() int64 {
	if f.MaxBytes <= 0 {
		return 0
	}
	return f.MaxBytes + int64(f.maxFiles())*perEntry + 1<<20
}

// boundedReader fails with ErrTooBig once left bytes were read.
type boundedReader struct {
	r    io.Reader
	left int64
}

func (b *boundedReader) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("%w: the sandbox's archive is larger than its files account for", ErrTooBig)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.r.Read(p)
	b.left -= int64(n)
	return n, err
}

func randomHex() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// fenceErr classes an os.Root refusal to leave its directory (a symlink
// or ".." on the way out) as a fence error.
func fenceErr(err error) error {
	if err != nil && strings.Contains(err.Error(), "path escapes from parent") {
		return fmt.Errorf("%w: %v (a symlink on the way leads out of the allowed directory)", ErrFence, err)
	}
	return err
}

// removeStaging removes a copy's staging directory. It holds the old tree
// a replace moved aside, and another copy_out that opened a directory of
// that tree before the move may still be writing in it (its own staging
// directory, its file): a removal that meets a directory not yet empty is
// tried again, a few times, so that nothing is left behind.
func removeStaging(pr *os.Root, staging string) {
	for i := range 10 {
		if err := pr.RemoveAll(staging); err == nil {
			return
		}
		time.Sleep(time.Duration(i+1) * 20 * time.Millisecond)
	}
}
