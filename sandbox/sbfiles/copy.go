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

// WriteRequest says what Write writes, and where.
type WriteRequest struct {
	// Path is the file (clean, not an area root); its links are resolved.
	Path    string
	Content []byte
	// Append adds Content at the file's end; the file may then grow to
	// Max bytes.
	Append bool
	Max    int64
}

// Write writes (or appends) a file, creating its parent directories, owned
// by the sandbox user, and returns the path written (links resolved) and
// the file's size.
func (b *Box) Write(ctx context.Context, req WriteRequest) (string, int64, error) {
	target, err := b.Resolve(ctx, req.Path, true)
	if err != nil {
		return "", 0, err
	}
	content := req.Content
	if req.Append {
		old, err := b.ReadAll(ctx, target, req.Max)
		switch {
		case errors.Is(err, b.Invalid) && strings.Contains(err.Error(), "does not exist"):
		case err != nil:
			return "", 0, err
		default:
			if int64(len(old)+len(content)) > req.Max {
				return "", 0, b.invalid("the file would grow past %d bytes; use copy_in for large files", req.Max)
			}
			content = append(old, content...)
		}
	}
	// The tar holds the file under the nearest area root, with its parent
	// directories, so missing directories are created with the right owner.
	base := Area(target)
	if err := b.TarInto(ctx, base, hostcopy.FileTar(b.UID, b.GID, strings.TrimPrefix(target, base+"/"), content)); err != nil {
		return "", 0, err
	}
	return target, int64(len(content)), nil
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
