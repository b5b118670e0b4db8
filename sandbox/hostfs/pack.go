package hostfs

import (
	"archive/tar"
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"
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
	abs  string // host path
	rel  string // slash path below the top, "" for the top itself
	mode fs.FileMode
	size int64
	mod  time.Time
	link string // symlink target
}

// Plan is a host file or tree checked against the fence and the limits,
// ready to stream. Making a plan reads only metadata.
type Plan struct {
	opts    PackOptions
	entries []entry
	Stats   PackStats
}

// Plan walks src (already resolved by ReadPath) without following symlinks,
// skips .git and ignored files unless asked, skips special files, and
// refuses (ErrTooBig) before anything is sent when the total passes the
// limits.
func (f Fence) Plan(ctx context.Context, src string, opts PackOptions) (*Plan, error) {
	p := &Plan{opts: opts, Stats: PackStats{Skipped: map[string]int{}}}
	skip := func(reason string) { p.Stats.Skipped[reason]++ }
	ig := &ignorer{}
	maxFiles := f.maxFiles()
	deny := f.denyRules()
	err := filepath.WalkDir(src, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return fmt.Errorf("read %s: %w", abs, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, abs)
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		if rel != "" && deniedBy(deny, abs) != "" {
			skip("in files.read_deny")
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if rel != "" && !opts.IncludeIgnored {
			if d.IsDir() && d.Name() == ".git" {
				skip(".git")
				return filepath.SkipDir
			}
			if ig.ignored(rel, d.IsDir()) {
				skip("gitignored")
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
		}
		info, err := d.Info()
		if err != nil {
			return fmt.Errorf("stat %s: %w", abs, err)
		}
		e := entry{abs: abs, rel: rel, mode: info.Mode(), mod: info.ModTime()}
		switch {
		case info.Mode().IsRegular():
			e.size = info.Size()
			p.Stats.Files++
			p.Stats.Bytes += e.size
		case info.IsDir():
			p.Stats.Dirs++
			if !opts.IncludeIgnored {
				ig.load(abs, rel)
			}
		case info.Mode()&fs.ModeSymlink != 0:
			if e.link, err = os.Readlink(abs); err != nil {
				return fmt.Errorf("read link %s: %w", abs, err)
			}
			p.Stats.Symlinks++
		default:
			skip("special file")
			return nil
		}
		if len(p.entries) >= maxFiles {
			return fmt.Errorf("%w: %s has more than %d files; copy a smaller directory", ErrTooBig, src, maxFiles)
		}
		if f.MaxBytes > 0 && p.Stats.Bytes > f.MaxBytes {
			return fmt.Errorf("%w: %s holds more than %d MB (files.max_copy_mb); copy a smaller part", ErrTooBig, src, f.MaxBytes>>20)
		}
		p.entries = append(p.entries, e)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(p.Stats.Skipped) == 0 {
		p.Stats.Skipped = nil
	}
	sort.Slice(p.entries, func(i, j int) bool { return p.entries[i].rel < p.entries[j].rel })
	return p, nil
}

// WriteTar streams the plan as a tar. A file that grew since the plan is
// cut at its planned size and one that shrank is an error, so the stream
// never exceeds what was checked.
func (p *Plan) WriteTar(ctx context.Context, w io.Writer) error {
	tw := tar.NewWriter(w)
	for _, e := range p.entries {
		if err := ctx.Err(); err != nil {
			return err
		}
		name := p.opts.Name
		if e.rel != "" {
			name = path.Join(p.opts.Name, e.rel)
		}
		h := &tar.Header{Name: name, ModTime: e.mod, Uid: p.opts.UID, Gid: p.opts.GID, Format: tar.FormatPAX}
		switch {
		case e.mode.IsDir():
			h.Typeflag, h.Name, h.Mode = tar.TypeDir, name+"/", 0o755
		case e.mode&fs.ModeSymlink != 0:
			h.Typeflag, h.Linkname, h.Mode = tar.TypeSymlink, e.link, 0o777
		default:
			// Keep the owner's execute bit (scripts); drop setuid and co.
			h.Typeflag, h.Size, h.Mode = tar.TypeReg, e.size, 0o644
			if e.mode.Perm()&0o100 != 0 {
				h.Mode = 0o755
			}
		}
		if err := tw.WriteHeader(h); err != nil {
			return err
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		if err := copyFile(tw, e); err != nil {
			return err
		}
	}
	return tw.Close()
}

func copyFile(w io.Writer, e entry) error {
	f, err := os.Open(e.abs)
	if err != nil {
		return fmt.Errorf("read %s: %w", e.abs, err)
	}
	defer f.Close()
	n, err := io.Copy(w, io.LimitReader(f, e.size))
	if err != nil {
		return fmt.Errorf("read %s: %w", e.abs, err)
	}
	if n != e.size {
		return fmt.Errorf("read %s: the file shrank while it was copied", e.abs)
	}
	return nil
}
