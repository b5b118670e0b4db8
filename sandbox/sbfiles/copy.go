package sbfiles

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// HostErr classes the host fence's refusals as policy errors, keeping the
// fence's own class too: the window asks before replacing on
// hostfs.ErrExists.
func (c Classes) HostErr(err error) error {
	switch {
	case errors.Is(err, hostfs.ErrFence), errors.Is(err, hostfs.ErrTooBig), errors.Is(err, hostfs.ErrExists):
		return fmt.Errorf("%w: %w", c.Policy, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %v", c.Invalid, err)
	}
	return err
}

// CopyIn streams plan (a host file or tree the fence let through, named
// path.Base(dest)) into the sandbox at dest (clean), creating its parent
// directories as the sandbox user's, and returns where it landed, links
// in the parent resolved.
func (b *Box) CopyIn(ctx context.Context, dest string, plan *hostfs.Plan) (string, error) {
	dir, err := b.Resolve(ctx, path.Dir(dest), true)
	if err != nil {
		return "", err
	}
	if base := Area(dir); dir != base {
		// Create the parent directories first (owned by the sandbox user).
		if err := b.TarInto(ctx, base, hostcopy.DirsTar(b.UID, b.GID, strings.TrimPrefix(dir, base+"/"))); err != nil {
			return "", err
		}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(plan.WriteTar(ctx, pw)) }()
	err = b.TarInto(ctx, dir, pr)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return "", err
	}
	return path.Join(dir, path.Base(dest)), nil
}

// CopyOutRequest says what CopyOut copies to the host, and how.
type CopyOutRequest struct {
	// Path is the sandbox path (clean); its links are resolved.
	Path string
	// Fence is the host's write fence.
	Fence hostfs.Fence
	// HostPath is the destination as asked ("": Dir/<base name>).
	HostPath string
	Dir      string
	// Overwrite lets the copy replace files on the host; Links makes
	// symlinks there (files.copy_out_links).
	Overwrite, Links bool
}

// CopyOutResult is what CopyOut copied: from Src (resolved) to HostPath.
type CopyOutResult struct {
	Src, HostPath string
	Stats         hostfs.UnpackStats
}

// CopyOut copies a sandbox file or directory to the host through the write
// fence (write root, write_deny by identity, no overwrite unless asked, no
// exec bits, links only if asked).
func (b *Box) CopyOut(ctx context.Context, req CopyOutRequest) (CopyOutResult, error) {
	src, err := b.Resolve(ctx, req.Path, true)
	if err != nil {
		return CopyOutResult{}, err
	}
	root, dest, err := req.Fence.WritePath(req.HostPath, path.Join(req.Dir, hostcopy.BaseName(src)))
	if err != nil {
		return CopyOutResult{}, b.HostErr(err)
	}
	rc, err := b.TarFrom(ctx, src)
	if err != nil {
		return CopyOutResult{}, err
	}
	defer rc.Close()
	st, err := req.Fence.Unpack(ctx, rc, root, dest, hostfs.UnpackOptions{Overwrite: req.Overwrite, Links: req.Links})
	if errors.Is(err, hostfs.ErrEmptyArchive) {
		err = hostcopy.StreamErr(rc, err)
	}
	if err != nil {
		return CopyOutResult{}, b.HostErr(err)
	}
	return CopyOutResult{Src: src, HostPath: dest, Stats: st}, nil
}
