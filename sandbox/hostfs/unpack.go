package hostfs

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
)

// UnpackOptions says how a tar stream from a sandbox lands on the host.
type UnpackOptions struct {
	// Overwrite replaces an existing destination (file or directory).
	Overwrite bool
}

// UnpackStats says what was written and what was refused.
type UnpackStats struct {
	Files    int            `json:"files"`
	Dirs     int            `json:"dirs"`
	Symlinks int            `json:"symlinks"`
	Bytes    int64          `json:"bytes"`
	Skipped  map[string]int `json:"skipped,omitempty"`
}

// Unpack extracts a tar stream of one sandbox file or directory to dest
// (from WritePath). Everything is written into a staging directory next to
// dest and renamed into place at the end, so a failure (a limit, a broken
// stream, a cancelled call) leaves nothing behind. Entries that would leave
// the tree are refused; symlinks are made only when they point inside the
// copied tree, and only after every file, so nothing is written through
// one; devices, FIFOs and hard links are skipped; no file gets an
// executable bit.
func (f Fence) Unpack(ctx context.Context, r io.Reader, dest string, opts UnpackOptions) (st UnpackStats, err error) {
	st.Skipped = map[string]int{}
	defer func() {
		if len(st.Skipped) == 0 {
			st.Skipped = nil
		}
	}()
	if _, err := os.Lstat(dest); err == nil {
		if !opts.Overwrite {
			return st, fmt.Errorf("%w: %s already exists; pass overwrite: true to replace it", ErrExists, dest)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return st, err
	}
	parent := filepath.Dir(dest)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return st, fmt.Errorf("create %s: %w", parent, err)
	}
	staging, err := os.MkdirTemp(parent, ".mcp-sandbox-copy-*")
	if err != nil {
		return st, fmt.Errorf("create staging directory: %w", err)
	}
	defer os.RemoveAll(staging)
	top := filepath.Join(staging, "top")

	type link struct{ at, target string }
	var links []link
	tr := tar.NewReader(r)
	first := true
	var topName string
	maxFiles := f.maxFiles()
	for {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return st, fmt.Errorf("read the sandbox's archive: %w", err)
		}
		if err := checkName(h.Name); err != nil {
			return st, err
		}
		// Clean against a root so ".." cannot climb; "/", "." and ".."
		// all clean to the root itself, which is the empty name.
		name := strings.TrimPrefix(path.Clean("/"+h.Name), "/")
		if first {
			first = false
			topName = name
			if strings.Contains(topName, "/") || topName == "" {
				return st, fmt.Errorf("%w: unexpected archive layout (%q)", ErrFence, h.Name)
			}
			if h.Typeflag == tar.TypeSymlink {
				return st, fmt.Errorf("%w: %s is a symlink (to %s); copy_out does not follow links, copy the file it points to instead", ErrFence, topName, h.Linkname)
			}
		}
		rel, ok := strings.CutPrefix(name, topName)
		if !ok || (rel != "" && !strings.HasPrefix(rel, "/")) {
			return st, fmt.Errorf("%w: archive entry %q is outside the copied tree", ErrFence, h.Name)
		}
		rel = strings.TrimPrefix(rel, "/")
		at := top
		if rel != "" {
			at = filepath.Join(top, filepath.FromSlash(rel))
		}
		if !within(top, at) {
			return st, fmt.Errorf("%w: archive entry %q leaves the copied tree", ErrFence, h.Name)
		}
		if st.Files+st.Dirs+st.Symlinks >= maxFiles {
			return st, fmt.Errorf("%w: more than %d entries", ErrTooBig, maxFiles)
		}
		switch h.Typeflag {
		case tar.TypeDir:
			if err := os.MkdirAll(at, 0o755); err != nil {
				return st, err
			}
			st.Dirs++
		case tar.TypeReg:
			if f.MaxBytes > 0 && st.Bytes+h.Size > f.MaxBytes {
				return st, fmt.Errorf("%w: more than %d MB (files.max_copy_mb)", ErrTooBig, f.MaxBytes>>20)
			}
			if err := writeRegular(at, tr, h.Size); err != nil {
				return st, err
			}
			st.Files++
			st.Bytes += h.Size
		case tar.TypeSymlink:
			// Relative targets that stay inside the copied tree only.
			target := h.Linkname
			if target == "" || path.IsAbs(target) || strings.Contains(target, "\\") || escapes(rel, target) {
				st.Skipped["symlink pointing outside the copied tree"]++
				continue
			}
			links = append(links, link{at: at, target: target})
		case tar.TypeLink:
			st.Skipped["hard link"]++
		default:
			st.Skipped["device or special file"]++
		}
	}
	if first {
		return st, fmt.Errorf("the sandbox returned an empty archive")
	}
	for _, l := range links {
		if err := os.Symlink(filepath.FromSlash(l.target), l.at); err != nil {
			// Windows without the privilege to make links, or a name taken
			// by a file of the archive: leave the link out.
			st.Skipped["symlink that could not be created"]++
			continue
		}
		st.Symlinks++
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := replace(top, dest, staging, opts.Overwrite); err != nil {
		return st, err
	}
	return st, nil
}

// escapes reports whether a symlink at rel (slash path below the tree's
// top) with a relative target leaves the tree.
func escapes(rel, target string) bool {
	depth := strings.Count(rel, "/") // directories above the link, inside the tree
	for _, part := range strings.Split(target, "/") {
		switch part {
		case "", ".":
		case "..":
			depth--
			if depth < 0 {
				return true
			}
		default:
			depth++
		}
	}
	return false
}

// writeRegular creates a new file (never through an existing name) with
// mode 0644 and exactly size bytes from r.
func writeRegular(at string, r io.Reader, size int64) error {
	if err := os.MkdirAll(filepath.Dir(at), 0o755); err != nil {
		return err
	}
	w, err := os.OpenFile(at, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if err != nil {
		return fmt.Errorf("write %s: %w", at, err)
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

// replace moves the staged tree to dest; an existing dest (when allowed) is
// moved aside first and removed once the new one is in place.
func replace(staged, dest, staging string, overwrite bool) error {
	if _, err := os.Lstat(dest); err == nil {
		if !overwrite {
			return fmt.Errorf("%w: %s appeared while copying", ErrExists, dest)
		}
		old := filepath.Join(staging, "old")
		if err := os.Rename(dest, old); err != nil {
			return fmt.Errorf("move the old %s aside: %w", dest, err)
		}
		if err := os.Rename(staged, dest); err != nil {
			_ = os.Rename(old, dest)
			return fmt.Errorf("put %s in place: %w", dest, err)
		}
		return nil
	}
	if err := os.Rename(staged, dest); err != nil {
		return fmt.Errorf("put %s in place: %w", dest, err)
	}
	return nil
}
