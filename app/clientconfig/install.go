package clientconfig

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

// InstallOptions says what Install writes and how.
type InstallOptions struct {
	// Env locates the config file.
	Env Env
	// Command is the absolute path of the mcp-sandbox binary the client
	// will run (with the argument "serve").
	Command string
	// DockerHost, when set, is written as DOCKER_HOST in the entry's env;
	// when empty, a DOCKER_HOST we wrote before is removed.
	DockerHost string
	// DryRun works out the change and its diff but writes nothing.
	DryRun bool
	// Force writes the config even when the client does not look
	// installed, creating its directory if need be.
	Force bool
}

// UninstallOptions says which config Uninstall edits and how.
type UninstallOptions struct {
	// Env locates the config file.
	Env Env
	// DryRun works out the change and its diff but writes nothing.
	DryRun bool
	// Only, when set, is asked about the entry found, under the lock: the
	// entry is removed only when Only returns true. An uninstaller uses it
	// to leave an entry that runs some other program (one the user
	// changed) as it is; Result.Kept then holds that entry.
	Only func(Entry) bool
}

// Result says what Install or Uninstall did to a config file.
type Result struct {
	// Client is the client's name.
	Client string `json:"client"`
	// Path is the config file where the client looks for it.
	Path string `json:"path"`
	// RealPath is set when Path is a symbolic link: the file that was
	// (or would be) written, through the link, which itself stays.
	RealPath string `json:"real_path,omitempty"`
	// Changed reports whether the file needed a change.
	Changed bool `json:"changed"`
	// Written reports whether the change was written (not on a dry run).
	Written bool `json:"written"`
	// Created reports whether the file did not exist before.
	Created bool `json:"created,omitempty"`
	// Backup is the copy of the previous file made before writing.
	Backup string `json:"backup,omitempty"`
	// Diff is the change as a unified diff, on a dry run.
	Diff string `json:"diff,omitempty"`
	// Kept is the entry Uninstall left because UninstallOptions.Only
	// refused it.
	Kept *Entry `json:"kept,omitempty"`
}

// Install writes our entry into the client's config file, keeping
// everything else in the file as it was. It writes nothing when the entry
// is already right.
func (c *Client) Install(ctx context.Context, opts InstallOptions) (*Result, error) {
	if opts.Command == "" || !opts.Env.isAbs(opts.Command) {
		return nil, fmt.Errorf("install %s: the command must be an absolute path, not %q", c.name, opts.Command)
	}
	if !opts.Force && !c.Installed(opts.Env) {
		return nil, fmt.Errorf("install %s: %w (force creates its config anyway)", c.name, ErrNotInstalled)
	}
	want := wantEntry(opts.Command, opts.DockerHost)
	return c.apply(ctx, opts.Env, "install", opts.DryRun, true, func(src []byte) ([]byte, error) {
		return c.format.install(src, want)
	})
}

// Uninstall removes our entry from the client's config file and nothing
// else: the servers object stays, even when empty.
func (c *Client) Uninstall(ctx context.Context, opts UninstallOptions) (*Result, error) {
	if opts.Only == nil {
		return c.apply(ctx, opts.Env, "uninstall", opts.DryRun, false, c.format.uninstall)
	}
	var kept *Entry
	res, err := c.apply(ctx, opts.Env, "uninstall", opts.DryRun, false, func(src []byte) ([]byte, error) {
		kept = nil // apply may edit a second time when the file changed meanwhile
		raw, err := c.format.read(src)
		if err != nil || raw == nil {
			return c.format.uninstall(src)
		}
		if e := entryFromRaw(raw); e != nil && !opts.Only(*e) {
			kept = e
			return src, nil
		}
		return c.format.uninstall(src)
	})
	if res != nil {
		res.Kept = kept
	}
	return res, err
}

// apply runs edit on the config file under our lock and writes the result
// safely: only when it differs, after a backup, atomically, keeping the
// file's mode. create allows making the file and its directory.
func (c *Client) apply(ctx context.Context, env Env, verb string, dryRun, create bool, edit func([]byte) ([]byte, error)) (*Result, error) {
	path, err := c.ConfigPath(env)
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w", verb, c.name, err)
	}
	res := &Result{Client: c.name, Path: path}
	real, err := resolveLink(path)
	if err != nil {
		return res, fmt.Errorf("%s %s: %w", verb, c.name, err)
	}
	if real != path {
		res.RealPath = real
	}
	fail := func(err error) (*Result, error) {
		var pe *ParseError
		if errors.As(err, &pe) && pe.Path == "" {
			pe.Path = real
		}
		if errors.Is(err, ErrStructure) {
			return res, fmt.Errorf("%s %s: %s: %w", verb, c.name, real, err)
		}
		return res, fmt.Errorf("%s %s: %w", verb, c.name, err)
	}
	dir := filepath.Dir(real)
	if !exists(dir) {
		if !create {
			return res, nil // nothing there to change
		}
		if !dryRun {
			if err := os.MkdirAll(dir, 0o700); err != nil {
				return fail(err)
			}
		}
	}
	if !dryRun {
		release, err := lockConfig(ctx, real)
		if err != nil {
			return fail(err)
		}
		defer release()
	}
	for attempt := 1; ; attempt++ {
		err := editOnce(res, real, dryRun, edit)
		if errors.Is(err, errChangedMeanwhile) && attempt < 3 {
			continue // the client rewrote its file under us: edit the new one
		}
		if err != nil {
			return fail(err)
		}
		return res, nil
	}
}

// editOnce reads the config file real, edits it and, unless dryRun,
// writes the result when it differs (after a backup, atomically, keeping
// the file's mode), noting in res what it did. errChangedMeanwhile: the
// file changed between the read and the write, and was left as it was.
func editOnce(res *Result, real string, dryRun bool, edit func([]byte) ([]byte, error)) error {
	src, fi, err := readConfig(real)
	if err != nil {
		return err
	}
	out, err := keepBOM(edit, src)
	if err != nil {
		return err
	}
	if bytes.Equal(out, src) {
		return nil
	}
	res.Changed, res.Created = true, fi == nil
	if dryRun {
		res.Diff = unifiedDiff(real, src, out, fi == nil)
		return nil
	}
	perm := fs.FileMode(0o600)
	if fi != nil {
		perm = fi.Mode().Perm()
		if perm&0o200 == 0 {
			return fmt.Errorf("%w: %s (make it writable, or edit it by hand)", ErrReadOnly, real)
		}
		if res.Backup, err = backup(real, src, perm); err != nil {
			return err
		}
	}
	unchanged := func() error {
		cur, curFi, err := readConfig(real)
		if err != nil || !bytes.Equal(cur, src) || (curFi == nil) != (fi == nil) {
			return errChangedMeanwhile
		}
		return nil
	}
	if err := writeAtomic(real, out, perm, fi, unchanged); err != nil {
		return err
	}
	res.Written = true
	if res.Backup != "" {
		filebackup.Prune(real)
	}
	return nil
}

// readConfig reads a config file; a missing one reads as nil with a nil
// FileInfo.
func readConfig(path string) ([]byte, fs.FileInfo, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, nil, fmt.Errorf("%s is not a regular file", path)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, nil, err
	}
	return b, fi, nil
}

// resolveLink follows path when it is a symbolic link, so that the file it
// points to is edited and the link kept.
func resolveLink(path string) (string, error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return path, nil
	}
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link whose target cannot be resolved: %w", path, err)
	}
	return real, nil
}

// utf8BOM is the byte order mark Windows editors such as Notepad put at the
// start of a UTF-8 file.
var utf8BOM = []byte("\xef\xbb\xbf")

// keepBOM runs edit on src without its byte order mark, if it has one, and
// puts the mark back on the result.
func keepBOM(edit func([]byte) ([]byte, error), src []byte) ([]byte, error) {
	body, found := bytes.CutPrefix(src, utf8BOM)
	out, err := edit(body)
	if err != nil || !found {
		return out, err
	}
	return append(bytes.Clone(utf8BOM), out...), nil
}
