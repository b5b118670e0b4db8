package ui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// chooseSave asks for a folder and saves the selected entry into it.
func (d *Details) chooseSave() {
	src := d.selected
	if src == "" || d.gone {
		return
	}
	fd := dialog.NewFolderOpen(func(dir fyne.ListableURI, err error) {
		if err != nil || dir == nil {
			return
		}
		d.SaveTo(src, filepath.Join(dir.Path(), path.Base(src)))
	}, d.win)
	if act := d.t.act.Details; act.SaveDir != nil {
		if u, err := saveStart(act.SaveDir()); err == nil {
			fd.SetLocation(u)
		}
	}
	fd.Show()
}

// saveStart is where Save to… opens: files.write_root, the one place
// copy_out writes below, made if missing, so that its first choice is
// not refused. "~" is the home folder, as in the config.
func saveStart(root string) (fyne.ListableURI, error) {
	if root == "" {
		return nil, errors.New("no files.write_root is set")
	}
	dir := config.ExpandHome(root)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("make the write root: %w", err)
	}
	return storage.ListerForURI(storage.NewFileURI(dir))
}

// SaveTo copies the sandbox path src to dest and says how it went. An
// existing dest is replaced only after the user confirms it.
func (d *Details) SaveTo(src, dest string) { d.saveTo(src, dest, false) }

func (d *Details) saveTo(src, dest string, overwrite bool) {
	save := d.t.act.Details.Save
	if save == nil {
		return
	}
	var res sandbox.CopyOutResult
	var there string // what a replace removes
	d.t.w.async(func(ctx context.Context) (err error) {
		res, err = save(ctx, d.id, src, dest, overwrite)
		if err != nil && errors.Is(err, hostfs.ErrExists) {
			there = replaced(dest)
		}
		return err
	}, func(err error) {
		if err != nil && !overwrite && errors.Is(err, hostfs.ErrExists) && !d.gone {
			d.confirmReplace(src, dest, there)
			return
		}
		if err != nil {
			dialog.ShowError(fmt.Errorf("save %s: %s", src, cleanText(err.Error(), 600)), d.win)
			return
		}
		msg := fmt.Sprintf("Saved %s (%s) to %s.", plural(res.Files, "file", "files"), sandboxwatch.Bytes(uint64(max(res.Bytes, 0))), res.HostPath)
		if n := len(res.SkippedLinks); n > 0 {
			msg += " " + plural(n, "symbolic link was", "symbolic links were") + " not made."
		}
		dialog.ShowInformation("Saved", msg, d.win)
	})
}

// confirmReplace asks before saving src over the existing dest, naming
// what is there now.
func (d *Details) confirmReplace(src, dest, there string) {
	confirm("Replace "+there+"?",
		cleanText(dest, 600)+" already exists. Replacing it removes "+there+" and puts the sandbox's "+cleanText(src, 300)+" in its place.",
		"Replace", d.win, func() { d.saveTo(src, dest, true) })
}

// replaceCount bounds how many files of a folder a replace question
// counts: past it, it says "more than".
const replaceCount = 10000

// replaced says what is at p now, as a replace would remove it: "the file
// report.csv (12 bytes)", "the folder out with 3 files (1.2 KB)", "the
// empty folder out", "the link l".
func replaced(p string) string {
	name := cleanText(filepath.Base(p), 120)
	fi, err := os.Lstat(p)
	switch {
	case err != nil:
		return name
	case fi.Mode()&fs.ModeSymlink != 0:
		return "the link " + name
	case fi.Mode().IsRegular():
		return fmt.Sprintf("the file %s (%s)", name, byteCount(fi.Size()))
	case !fi.IsDir():
		return name
	}
	files, size := 0, int64(0)
	_ = filepath.WalkDir(p, func(_ string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		if files++; files > replaceCount {
			return filepath.SkipAll
		}
		if i, err := e.Info(); err == nil {
			size += i.Size()
		}
		return nil
	})
	switch {
	case files == 0:
		return "the empty folder " + name
	case files > replaceCount:
		return fmt.Sprintf("the folder %s with more than %d files", name, replaceCount)
	}
	return fmt.Sprintf("the folder %s with %s (%s) in it", name, plural(files, "file", "files"), byteCount(size))
}

// byteCount is "12 bytes" below a kilobyte, sandboxwatch.Bytes above.
func byteCount(n int64) string {
	if n < 1024 {
		return plural(int(n), "byte", "bytes")
	}
	return sandboxwatch.Bytes(uint64(n))
}
