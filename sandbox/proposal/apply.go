package proposal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// ErrStale is returned (inside a stale Result) when a host file changed
// after the proposal was built.
var ErrStale = errors.New("a host file changed since the proposal was built")

// maxApplyRead bounds a host file read again to check it is unchanged.
const maxApplyRead = 64 << 20

// ApplyOptions is the policy in force when the person says yes.
type ApplyOptions struct {
	Fence      hostfs.Fence
	ApplyRoots []string
	// BackupDir holds the backups, one folder per proposal (in the state
	// directory: BackupDir(stateDir)).
	BackupDir string
	Now       time.Time // zero: time.Now()
}

// BackupDir is where Apply keeps backups, below the state directory.
func BackupDir(stateDir string) string { return filepath.Join(stateDir, "backups", "proposals") }

// Apply writes p to the host: first every host file is read again and
// compared with the hash taken when p was built (any difference: a stale
// Result, nothing written); then each file is written atomically through
// the fence (or removed), after a backup of what it replaces. Nothing is
// created outside p.HostPath (bar p.HostPath itself); missing directories
// inside it are made. An error after the first write leaves the files
// already written, listed with their backups in the error.
func Apply(ctx context.Context, p *Proposal, o ApplyOptions) (Result, error) {
	real, err := o.Fence.ApplyPath(p.HostPath, o.ApplyRoots)
	if err != nil {
		return Result{}, err
	}
	if real != p.HostPath {
		return p.Result(StatusStale), fmt.Errorf("%w: %s now leads to %s", ErrStale, p.HostPath, real)
	}
	h, err := openHost(o.Fence.ApplyGuard(), real, p.Tree, maxApplyRead)
	if err != nil {
		return Result{}, err
	}
	defer h.close()
	if err := h.unchanged(p.Files); err != nil {
		return p.Result(StatusStale), err
	}
	now := o.Now
	if now.IsZero() {
		now = time.Now()
	}
	var backups []string
	for _, f := range p.Files {
		if err := ctx.Err(); err != nil {
			return Result{}, partial(err, backups)
		}
		bak, err := h.write(p, f, o.BackupDir, now)
		if bak != "" {
			backups = append(backups, bak)
		}
		if err != nil {
			return Result{}, partial(err, backups)
		}
	}
	r := p.Result(StatusApplied)
	r.Backups = backups
	return r, nil
}

func partial(err error, backups []string) error {
	if len(backups) == 0 {
		return err
	}
	return fmt.Errorf("%w (some files were already written; backups of what they replaced: %v)", err, backups)
}

// unchanged checks every file against its hash from Build.
func (h *hostSide) unchanged(files []File) error {
	for _, f := range files {
		if err := h.same(f); err != nil {
			return err
		}
	}
	return nil
}

func (h *hostSide) same(f File) error {
	old, _, err := h.read(f.Rel)
	if err != nil {
		return fmt.Errorf("%w: %s: %w", ErrStale, f.HostPath, err)
	}
	now := ""
	if old != nil {
		now = hashOf(old)
	}
	if now != f.HostHash {
		return fmt.Errorf("%w: %s; propose the changes again", ErrStale, f.HostPath)
	}
	return nil
}

// write applies f: backup, then an atomic write or a removal, through a
// handle on its directory (made inside host_path when missing).
func (h *hostSide) write(p *Proposal, f File, backupDir string, now time.Time) (string, error) {
	dir, name, err := h.writeDir(f.Rel)
	if err != nil {
		return "", err
	}
	if dir != h.parent {
		defer dir.Close()
	}
	if err := h.g.CheckWrite(dir, f.HostPath, name); err != nil {
		return "", err
	}
	bak := ""
	if f.Change != Added {
		old, _, err := h.readIn(dir, name, f.HostPath)
		if err != nil {
			return "", err
		}
		if bak, err = backup(backupDir, p, f, old, now); err != nil {
			return "", err
		}
	}
	check := func() error { return h.same(f) }
	if f.Change == Deleted {
		if err := check(); err != nil {
			return bak, err
		}
		return bak, dir.Remove(name)
	}
	content, ok := p.content[f.Rel]
	if !ok || hashOf(content) != f.NewHash {
		return bak, fmt.Errorf("the new content of %s is missing or damaged; propose the changes again", f.HostPath)
	}
	return bak, atomicfile.WriteIn(dir, name, content, os.FileMode(f.Mode).Perm()&0o777, atomicfile.Options{Check: check})
}

// writeDir opens (making when missing) the directory f.Rel is written in.
func (h *hostSide) writeDir(rel string) (*os.Root, string, error) {
	if !h.tree {
		return h.parent, h.base, nil
	}
	if h.root == nil {
		r, err := h.g.WriteDir(h.parent, filepath.Dir(h.real), h.base)
		if err != nil {
			return nil, "", err
		}
		h.root = r
	}
	d, err := h.g.WriteDir(h.root, h.real, dirOf(rel))
	return d, path.Base(rel), err
}

// backup keeps old (the content f replaces or deletes) in
// backupDir/<proposal id>/<rel>.<stamp>.bak.
func backup(backupDir string, p *Proposal, f File, old []byte, now time.Time) (string, error) {
	if backupDir == "" {
		return "", errors.New("no backup directory; the server must set one")
	}
	rel := f.Rel
	if rel == "" {
		rel = filepath.Base(p.HostPath)
	}
	file := filepath.Join(backupDir, p.ID, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		return "", fmt.Errorf("back up %s: %w", f.HostPath, err)
	}
	return filebackup.Create(file, old, 0o600, now)
}

// line is the one line the assistant reads.
func (p *Proposal) line(status string) string {
	n := len(p.Files)
	switch status {
	case StatusApplied:
		return fmt.Sprintf("Applied %d file change(s) to %s; replaced and deleted files are backed up.", n, p.HostPath)
	case StatusDeclined:
		return "The person declined the changes; nothing on the host changed."
	case StatusPending:
		return fmt.Sprintf("Waiting for the person to review %d file change(s) in the MCP Sandbox window (proposal %s); nothing changed yet.", n, p.ID)
	case StatusStale:
		return "A host file changed since the proposal was built; nothing was written. Propose the changes again."
	}
	return status
}
