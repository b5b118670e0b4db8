package sandbox

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

// CopyInRequest says what CopyIn copies from the host, and where to.
type CopyInRequest struct {
	// HostPath is the host file or directory, below files.read_roots.
	HostPath string
	// DestPath is the path the copy gets in the sandbox
	// ("": /workspace/<base name>).
	DestPath string
	// IncludeIgnored copies what the directory's ignore files leave out.
	IncludeIgnored bool
}

// CopyOutRequest says what CopyOut copies from the sandbox, and where to.
type CopyOutRequest struct {
	// Path is the sandbox file or directory, resolved against /workspace.
	Path string
	// HostPath is the destination, relative to files.write_root or
	// absolute inside it ("": <write root>/<sandbox id>/<base name>).
	HostPath string
	// Overwrite lets the copy replace files that exist on the host.
	Overwrite bool
}

// CopyResult is what copy_in and copy_out report.
type CopyResult struct {
	Files    int            `json:"files"`
	Bytes    int64          `json:"bytes"`
	DestPath string         `json:"dest_path,omitempty"`
	HostPath string         `json:"host_path,omitempty"`
	Dirs     int            `json:"dirs"`
	Symlinks int            `json:"symlinks"`
	Skipped  map[string]int `json:"skipped,omitempty"`
	// SkippedLinks lists copy_out's symlinks that were not made on the
	// host (all of them unless files.copy_out_links is on), with their
	// targets.
	SkippedLinks []hostfs.SkippedLink `json:"skipped_links,omitempty"`
}

// hostErr classes the fence's refusals as policy errors, keeping the
// fence's own class too: the window asks before replacing on ErrExists.
func hostErr(err error) error {
	switch {
	case errors.Is(err, hostfs.ErrFence), errors.Is(err, hostfs.ErrTooBig), errors.Is(err, hostfs.ErrExists):
		return fmt.Errorf("%w: %w", ErrPolicy, err)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	return err
}

// CopyIn copies a host file or directory (below files.read_roots) into the
// sandbox, placing it at DestPath (default /workspace/<base name>).
func (e *Engine) CopyIn(ctx context.Context, id string, req CopyInRequest) (CopyResult, error) {
	hostPath, dest, includeIgnored := req.HostPath, req.DestPath, req.IncludeIgnored
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return CopyResult{}, err
	}
	f := hostcopy.Fence(e.cfg.Current())
	src, err := f.ReadPath(hostPath)
	if err != nil {
		return CopyResult{}, hostErr(err)
	}
	if dest == "" {
		dest = path.Join(Workspace, hostcopy.BaseName(src))
	}
	clean, err := ResolvePath(dest)
	if err != nil {
		return CopyResult{}, err
	}
	if clean == Workspace || clean == "/tmp" {
		return CopyResult{}, invalidErr("dest_path %s names the area itself; give the path the copy should have, such as %s/%s", clean, clean, hostcopy.BaseName(src))
	}
	uid, gid := userIDs(sb.User)
	plan, err := f.Plan(ctx, src, hostfs.PackOptions{Name: path.Base(clean), UID: uid, GID: gid, IncludeIgnored: includeIgnored})
	if err != nil {
		return CopyResult{}, hostErr(err)
	}
	e.begin(sb)
	defer e.end(sb)
	dir, err := e.resolve(ctx, sb, path.Dir(clean), true)
	if err != nil {
		return CopyResult{}, err
	}
	if dir != Workspace && dir != "/tmp" {
		// Create the parent directories first (owned by the sandbox user).
		base := Workspace
		if inTmp(dir) {
			base = "/tmp"
		}
		if err := e.tarInto(ctx, sb, base, hostcopy.DirsTar(uid, gid, strings.TrimPrefix(dir, base+"/"))); err != nil {
			return CopyResult{}, err
		}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(plan.WriteTar(ctx, pw)) }()
	err = e.tarInto(ctx, sb, dir, pr)
	pr.CloseWithError(io.ErrClosedPipe)
	if err != nil {
		return CopyResult{}, err
	}
	st := plan.Stats
	dest = path.Join(dir, path.Base(clean))
	sb.transcript.add("copy_in", fmt.Sprintf("%s -> %s (%d files, %d bytes)", src, dest, st.Files, st.Bytes), nil, "")
	return CopyResult{Files: st.Files, Dirs: st.Dirs, Symlinks: st.Symlinks, Bytes: st.Bytes, DestPath: dest, Skipped: st.Skipped}, nil
}

// CopyOut copies a sandbox file or directory to the host, below
// files.write_root (default <write root>/<sandbox id>/<base name>).
func (e *Engine) CopyOut(ctx context.Context, id string, req CopyOutRequest) (CopyResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return CopyResult{}, err
	}
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return CopyResult{}, err
	}
	e.begin(sb)
	defer e.end(sb)
	res, src, err := e.copyOut(ctx, sb, clean, req.HostPath, req.Overwrite)
	if err != nil {
		return CopyResult{}, err
	}
	sb.transcript.add("copy_out", fmt.Sprintf("%s -> %s (%d files, %d bytes)", src, res.HostPath, res.Files, res.Bytes), nil, "")
	return res, nil
}

// copyOut copies the sandbox path clean to the host through the write
// fence (write root, write_deny by identity, no overwrite unless asked, no
// exec bits, links by files.copy_out_links) and returns what it copied and
// the resolved source.
func (e *Engine) copyOut(ctx context.Context, sb *Sandbox, clean, hostPath string, overwrite bool) (CopyResult, string, error) {
	src, err := e.resolve(ctx, sb, clean, true)
	if err != nil {
		return CopyResult{}, "", err
	}
	cfg := e.cfg.Current()
	f := hostcopy.Fence(cfg)
	root, dest, err := f.WritePath(hostPath, path.Join(sb.ID, hostcopy.BaseName(src)))
	if err != nil {
		return CopyResult{}, "", hostErr(err)
	}
	rc, err := e.tarFrom(ctx, sb, src)
	if err != nil {
		return CopyResult{}, "", err
	}
	defer rc.Close()
	st, err := f.Unpack(ctx, rc, root, dest, hostfs.UnpackOptions{Overwrite: overwrite, Links: cfg.Files.CopyOutLinks})
	if errors.Is(err, hostfs.ErrEmptyArchive) {
		err = hostcopy.StreamErr(rc, err)
	}
	if err != nil {
		return CopyResult{}, "", hostErr(err)
	}
	return CopyResult{Files: st.Files, Dirs: st.Dirs, Symlinks: st.Symlinks, Bytes: st.Bytes, HostPath: dest, Skipped: st.Skipped, SkippedLinks: st.SkippedLinks}, src, nil
}
