package sandbox

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// Bounds of the file tools.
const (
	maxWriteBytes    = 16 << 20
	maxReadBytes     = 16 << 20
	defaultReadBytes = 256 << 10
	maxListEntries   = 5000
	// maxListNameBytes bounds the names and link targets one listing
	// keeps, through the agent or tar: the answer carries them twice
	// (text and structured) and must stay well within what clients take
	// in one message (the official SDKs: 16 MiB).
	maxListNameBytes = 2 << 20
)

// WriteFileRequest says what WriteFile writes, and where.
type WriteFileRequest struct {
	// Path is the file's path, resolved against /workspace.
	Path string
	// Content is what the file holds afterwards (appended with Append).
	Content []byte
	// Append adds Content at the file's end instead of replacing it.
	Append bool
}

// FileResult is what write_file reports.
type FileResult struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// WriteFile writes (or appends) content to a file in the sandbox, creating
// its parent directories, owned by the sandbox user.
func (e *Engine) WriteFile(ctx context.Context, id string, req WriteFileRequest) (FileResult, error) {
	p, content, appendTo := req.Path, req.Content, req.Append
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return FileResult{}, err
	}
	if len(content) > maxWriteBytes {
		return FileResult{}, invalidErr("content is %d bytes, more than %d; use copy_in for large files", len(content), maxWriteBytes)
	}
	clean, err := ResolvePath(p)
	if err != nil {
		return FileResult{}, err
	}
	if clean == backend.Workspace || clean == "/tmp" {
		return FileResult{}, invalidErr("%s is a directory; give a file path such as %s/notes.txt", clean, clean)
	}
	e.begin(sb)
	defer e.end(sb)
	if c := e.agentFor(ctx, sb); c != nil {
		return e.writeFileAgent(ctx, c, sb, clean, content, appendTo)
	}
	target, err := e.resolve(ctx, sb, clean, true)
	if err != nil {
		return FileResult{}, err
	}
	if appendTo {
		old, _, err := e.readAll(ctx, sb, target, maxWriteBytes)
		switch {
		case errors.Is(err, ErrInvalid) && strings.Contains(err.Error(), "does not exist"):
		case err != nil:
			return FileResult{}, err
		default:
			if len(old)+len(content) > maxWriteBytes {
				return FileResult{}, invalidErr("the file would grow past %d bytes; use copy_in for large files", maxWriteBytes)
			}
			content = append(old, content...)
		}
	}
	// The tar holds the file under the nearest area root, with its parent
	// directories, so missing directories are created with the right owner.
	base := backend.Workspace
	if inTmp(target) {
		base = "/tmp"
	}
	rel := strings.TrimPrefix(target, base+"/")
	if err := e.tarInto(ctx, sb, base, hostcopy.FileTar(sb.User, rel, content)); err != nil {
		return FileResult{}, err
	}
	sb.transcript.add("write_file", fmt.Sprintf("%s (%d bytes, append=%v)", target, len(content), appendTo), nil, "")
	return FileResult{Path: target, Bytes: int64(len(content))}, nil
}

// ReadFileRequest says which file ReadFile reads, and which part.
type ReadFileRequest struct {
	// Path is the file's path, resolved against /workspace.
	Path string
	// Offset is the first byte read.
	Offset int64
	// MaxBytes bounds the bytes read (0: a default).
	MaxBytes int64
}

// ReadResult is a file read from a sandbox.
type ReadResult struct {
	Path      string
	Data      []byte
	Size      int64
	Offset    int64
	Truncated bool
}

// ReadFile reads up to MaxBytes (0: a default) of a file from Offset,
// following symlinks only while they stay inside /workspace and /tmp.
//
// The file tools go through the sandbox's agent where it runs (one round
// trip, see agent.go); otherwise through the engine and the image's
// tar, as below.
func (e *Engine) ReadFile(ctx context.Context, id string, req ReadFileRequest) (ReadResult, error) {
	p, offset, maxBytes := req.Path, req.Offset, req.MaxBytes
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return ReadResult{}, err
	}
	if offset < 0 || maxBytes < 0 {
		return ReadResult{}, invalidErr("offset and max_bytes must not be negative")
	}
	if maxBytes == 0 {
		maxBytes = defaultReadBytes
	}
	if maxBytes > maxReadBytes {
		return ReadResult{}, invalidErr("max_bytes %d is more than %d; read in parts with offset, or use copy_out", maxBytes, maxReadBytes)
	}
	clean, err := ResolvePath(p)
	if err != nil {
		return ReadResult{}, err
	}
	done, err := e.mem.Take(ctx, maxBytes)
	if err != nil {
		return ReadResult{}, err
	}
	defer done()
	e.begin(sb)
	defer e.end(sb)
	if c := e.agentFor(ctx, sb); c != nil {
		res, err := e.readFileAgent(ctx, c, sb, clean, offset, maxBytes)
		if !errors.Is(err, agentconn.ErrDied) {
			return res, err
		}
		// A read can be made again, through the engine.
	}
	target, err := e.resolve(ctx, sb, clean, true)
	if err != nil {
		return ReadResult{}, err
	}
	rc, err := e.tarFrom(ctx, sb, target)
	if err != nil {
		return ReadResult{}, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := hostcopy.FirstHeader(tr, rc)
	if err != nil {
		return ReadResult{}, fileErr("read", target, err)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return ReadResult{}, invalidErr("%s is a directory; list it with list_files", target)
	case tar.TypeReg:
	default:
		return ReadResult{}, invalidErr("%s is not a regular file", target)
	}
	res := ReadResult{Path: target, Size: h.Size, Offset: offset}
	if offset > h.Size {
		return res, invalidErr("offset %d is past the end of %s (%d bytes)", offset, target, h.Size)
	}
	// Only the part asked for is read; closing the stream early stops the
	// engine from sending the rest (a 10 GB file costs what was asked).
	if _, err := io.CopyN(io.Discard, tr, offset); err != nil {
		return res, fmt.Errorf("read %s: %w", target, err)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(maxBytes, h.Size-offset)) + bytes.MinRead) // no copies as it grows
	if _, err := io.CopyN(&buf, tr, maxBytes); err != nil && err != io.EOF {
		return res, fmt.Errorf("read %s: %w", target, err)
	}
	res.Data = buf.Bytes()
	res.Truncated = offset+int64(len(res.Data)) < h.Size
	return res, nil
}

// readAll reads a whole file (at most limit bytes) from a resolved path.
func (e *Engine) readAll(ctx context.Context, sb *Sandbox, p string, limit int64) ([]byte, int64, error) {
	rc, err := e.tarFrom(ctx, sb, p)
	if err != nil {
		return nil, 0, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := hostcopy.FirstHeader(tr, rc)
	if err != nil {
		return nil, 0, fileErr("read", p, err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, 0, invalidErr("%s is not a regular file", p)
	}
	if h.Size > limit {
		return nil, h.Size, invalidErr("%s is %d bytes, more than %d", p, h.Size, limit)
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, tr)
	return buf.Bytes(), h.Size, err
}

// FileEntry is one entry of list_files.
type FileEntry struct {
	Path     string `json:"path"`
	Size     int64  `json:"size"`
	IsDir    bool   `json:"is_dir"`
	Mode     string `json:"mode"`
	Modified string `json:"modified"`
	// Link is a symlink's target.
	Link string `json:"link,omitempty"`
}

// ListFilesRequest says which directory ListFiles lists.
type ListFilesRequest struct {
	// Path is the directory, resolved against /workspace ("": /workspace).
	Path string
	// Recursive lists everything below Path, not only its entries.
	Recursive bool
}

// ListFilesResult is a directory listing.
type ListFilesResult struct {
	Entries []FileEntry
	// Truncated says the listing stopped at its bounds (entries or names).
	Truncated bool
}

// ListFiles lists a directory (recursively if asked), through the agent
// where it runs, else from the tar headers of the engine's archive, which
// every image can answer.
func (e *Engine) ListFiles(ctx context.Context, id string, req ListFilesRequest) (ListFilesResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return ListFilesResult{}, err
	}
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return ListFilesResult{}, err
	}
	e.begin(sb)
	defer e.end(sb)
	if c := e.agentFor(ctx, sb); c != nil {
		entries, truncated, err := e.listFilesAgent(ctx, c, sb, clean, req.Recursive)
		if !errors.Is(err, agentconn.ErrDied) {
			return ListFilesResult{Entries: entries, Truncated: truncated}, err
		}
	}
	entries, truncated, err := e.listByTar(ctx, sb, clean, req.Recursive)
	return ListFilesResult{Entries: entries, Truncated: truncated}, err
}

// listByTar is ListFiles through the sandbox's tar (or the engine's
// archive), for a sandbox without an agent.
func (e *Engine) listByTar(ctx context.Context, sb *Sandbox, clean string, recursive bool) ([]FileEntry, bool, error) {
	target, err := e.resolve(ctx, sb, clean, true)
	if err != nil {
		return nil, false, err
	}
	rc, err := e.tarFrom(ctx, sb, target)
	if err != nil {
		return nil, false, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	parent := path.Dir(target)
	var out []FileEntry
	first := true
	// The names come from the sandbox (a tree of long, deep names):
	// they are counted before they are kept, as the agent counts its
	// listing.
	names := 0
	for {
		var h *tar.Header
		if first {
			h, err = hostcopy.FirstHeader(tr, rc)
		} else {
			h, err = tr.Next()
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, false, fileErr("list", target, err)
		}
		name := path.Join(parent, h.Name)
		if first {
			first = false
			if h.Typeflag != tar.TypeDir {
				return []FileEntry{entryOf(name, h)}, false, nil
			}
			continue // the directory itself
		}
		if !recursive && path.Dir(name) != target {
			continue
		}
		names += len(name) + len(h.Linkname)
		if len(out) >= maxListEntries || names > maxListNameBytes {
			return out, true, nil
		}
		out = append(out, entryOf(name, h))
	}
	return out, false, nil
}

// fileErr keeps the engine's classes (invalid request, policy) of an
// error from the sandbox's tar and words the rest.
func fileErr(op, p string, err error) error {
	if errors.Is(err, ErrInvalid) || errors.Is(err, ErrPolicy) || errors.Is(err, ErrNotFound) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

func entryOf(name string, h *tar.Header) FileEntry {
	fe := FileEntry{
		Path: name, Size: h.Size, IsDir: h.Typeflag == tar.TypeDir,
		Mode: h.FileInfo().Mode().String(), Modified: h.ModTime.UTC().Format(time.RFC3339),
	}
	if h.Typeflag == tar.TypeSymlink {
		fe.Link = h.Linkname
	}
	if fe.IsDir {
		fe.Size = 0
	}
	return fe
}

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
// fence's own class too: the window asks before replacing on hostfs.ErrExists.
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
		dest = path.Join(backend.Workspace, hostcopy.BaseName(src))
	}
	clean, err := ResolvePath(dest)
	if err != nil {
		return CopyResult{}, err
	}
	if clean == backend.Workspace || clean == "/tmp" {
		return CopyResult{}, invalidErr("dest_path %s names the area itself; give the path the copy should have, such as %s/%s", clean, clean, hostcopy.BaseName(src))
	}
	uid, gid := hostcopy.UserIDs(sb.User)
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
	if dir != backend.Workspace && dir != "/tmp" {
		// Create the parent directories first (owned by the sandbox user).
		base := backend.Workspace
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
