package proposal

import (
	"archive/tar"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"runtime"
	"strings"
)

// foldsCase: the host's usual file systems (macOS, Windows) ignore case.
var foldsCase = runtime.GOOS == "darwin" || runtime.GOOS == "windows"

// Limits bound what one proposal carries (it is kept in the state
// directory until the person decides).
type Limits struct {
	MaxFiles     int   // entries of the sandbox's tree; 0: 2000
	MaxBytes     int64 // all files' bytes; 0: 32 MiB
	MaxFileBytes int64 // one file's bytes; 0: 8 MiB
}

func (l Limits) withDefaults() Limits {
	if l.MaxFiles <= 0 {
		l.MaxFiles = 2000
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = 32 << 20
	}
	if l.MaxFileBytes <= 0 {
		l.MaxFileBytes = 8 << 20
	}
	return l
}

// sandboxTree is the sandbox's side, read from its tar stream.
type sandboxTree struct {
	dir     bool
	files   map[string][]byte // by slash path below the top ("" for a file)
	modes   map[string]fs.FileMode
	skipped []Skipped
}

func (t *sandboxTree) skip(p, reason string) {
	if len(t.skipped) < maxSkipped {
		t.skipped = append(t.skipped, Skipped{Path: p, Reason: reason})
	}
}

// readArchive reads the tar stream of one sandbox file or directory (the
// first entry is the top; every other entry is below it). The stream is
// hostile: names that leave the top refuse the whole proposal, symlinks,
// hard links, devices and FIFOs are reported in skipped, and the limits
// are checked on the headers before any content is read.
func readArchive(ctx context.Context, r io.Reader, lim Limits) (*sandboxTree, error) {
	tr := tar.NewReader(r)
	t := &sandboxTree{files: map[string][]byte{}, modes: map[string]fs.FileMode{}}
	top, n, total := "", 0, int64(0)
	for {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrArchive, err)
		}
		if n++; n > lim.MaxFiles {
			return nil, fmt.Errorf("%w: more than %d entries; propose a smaller directory", ErrTooBig, lim.MaxFiles)
		}
		rel, err := entryName(h.Name, &top, n == 1, h.Typeflag == tar.TypeDir)
		if err != nil {
			return nil, err
		}
		if n == 1 {
			t.dir = h.Typeflag == tar.TypeDir
			if !t.dir && h.Typeflag != tar.TypeReg {
				return nil, fmt.Errorf("%w: %s is not a regular file or a directory; propose a file or a directory", ErrArchive, top)
			}
		}
		switch h.Typeflag {
		case tar.TypeDir:
			continue
		case tar.TypeReg:
		case tar.TypeSymlink:
			t.skip(rel, "symlink to "+truncate(h.Linkname, 200)+": a proposal carries regular files only")
			continue
		default:
			t.skip(rel, "not a regular file: a proposal carries regular files only")
			continue
		}
		if h.Size > lim.MaxFileBytes {
			return nil, fmt.Errorf("%w: %s is %d bytes, more than the %d a proposal carries; copy_out it instead", ErrTooBig, path.Join(top, rel), h.Size, lim.MaxFileBytes)
		}
		if total += h.Size; total > lim.MaxBytes {
			return nil, fmt.Errorf("%w: the files pass %d bytes; propose a smaller directory", ErrTooBig, lim.MaxBytes)
		}
		if _, dup := t.files[rel]; dup {
			return nil, fmt.Errorf("%w: %s appears twice", ErrArchive, rel)
		}
		b, err := io.ReadAll(io.LimitReader(tr, h.Size))
		if err != nil || int64(len(b)) != h.Size {
			return nil, fmt.Errorf("%w: %s cut short: %v", ErrArchive, rel, err)
		}
		t.files[rel] = b
		t.modes[rel] = fs.FileMode(h.Mode).Perm()
	}
	if n == 0 {
		return nil, fmt.Errorf("%w: empty; check that the path exists in the sandbox", ErrArchive)
	}
	return t, t.checkParents()
}

// checkParents refuses a file that is also a directory above another,
// and (where the host's file systems ignore case) two names that differ
// only in case: they would land on one host file.
func (t *sandboxTree) checkParents() error {
	folded := map[string]string{}
	for rel := range t.files {
		if foldsCase {
			if other, ok := folded[strings.ToLower(rel)]; ok {
				return fmt.Errorf("%w: %s and %s differ only in case, which this host does not tell apart; rename one", ErrArchive, rel, other)
			}
			folded[strings.ToLower(rel)] = rel
		}
		for d := path.Dir(rel); d != "."; d = path.Dir(d) {
			if _, ok := t.files[d]; ok {
				return fmt.Errorf("%w: %s is a file and a directory", ErrArchive, d)
			}
		}
	}
	return nil
}

// entryName returns name's slash path below the top ("" for the top),
// refusing names that leave it.
func entryName(name string, top *string, first, isDir bool) (string, error) {
	clean := strings.TrimSuffix(name, "/")
	if strings.Contains(clean, `\`) || path.IsAbs(clean) || clean == "" || path.Clean(clean) != clean || !fs.ValidPath(clean) {
		return "", fmt.Errorf("%w: entry %q is not a plain relative name", ErrArchive, name)
	}
	if strings.ContainsFunc(clean, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		return "", fmt.Errorf("%w: entry %q holds a control character", ErrArchive, name)
	}
	if first {
		if strings.Contains(clean, "/") {
			return "", fmt.Errorf("%w: first entry %q is not the top", ErrArchive, name)
		}
		*top = clean
		return "", nil
	}
	rel, ok := strings.CutPrefix(clean, *top+"/")
	if !ok {
		return "", fmt.Errorf("%w: entry %q is outside %s", ErrArchive, name, *top)
	}
	// On Windows: no reserved device names (NUL, COM1), no ":" (a stream).
	if !filepath.IsLocal(filepath.FromSlash(rel)) || filepath.Separator == '\\' && strings.Contains(rel, ":") {
		return "", fmt.Errorf("%w: entry %q is not a plain name on this system", ErrArchive, name)
	}
	return rel, nil
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}
