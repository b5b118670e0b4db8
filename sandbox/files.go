package sandbox

import (
	"context"
	"errors"
	"fmt"
	"path"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
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

// WriteFileResult is what write_file reports.
type WriteFileResult struct {
	Path  string `json:"path"`
	Bytes int64  `json:"bytes"`
}

// WriteFile writes (or appends) content to a file in the sandbox, creating
// its parent directories, owned by the sandbox user.
func (e *Engine) WriteFile(ctx context.Context, id string, req WriteFileRequest) (WriteFileResult, error) {
	p, content, appendTo := req.Path, req.Content, req.Append
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return WriteFileResult{}, err
	}
	if len(content) > maxWriteBytes {
		return WriteFileResult{}, invalidErr("content is %d bytes, more than %d; use copy_in for large files", len(content), maxWriteBytes)
	}
	clean, err := ResolvePath(p)
	if err != nil {
		return WriteFileResult{}, err
	}
	if clean == backend.Workspace || clean == "/tmp" {
		return WriteFileResult{}, invalidErr("%s is a directory; give a file path such as %s/notes.txt", clean, clean)
	}
	e.begin(sb)
	defer e.end(sb)
	if c := e.agentFor(ctx, sb); c != nil {
		return e.writeFileAgent(ctx, c, sb, clean, content, appendTo)
	}
	target, n, err := e.box(sb).Write(ctx, sbfiles.WriteRequest{Path: clean, Content: content, Append: appendTo, Max: maxWriteBytes})
	if err != nil {
		return WriteFileResult{}, err
	}
	sb.transcript.add("write_file", fmt.Sprintf("%s (%d bytes, append=%v)", target, n, appendTo), nil, "")
	return WriteFileResult{Path: target, Bytes: n}, nil
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

// ReadFileResult is a file read from a sandbox.
type ReadFileResult struct {
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
// tar (sandbox/sbfiles).
func (e *Engine) ReadFile(ctx context.Context, id string, req ReadFileRequest) (ReadFileResult, error) {
	p, offset, maxBytes := req.Path, req.Offset, req.MaxBytes
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return ReadFileResult{}, err
	}
	if offset < 0 || maxBytes < 0 {
		return ReadFileResult{}, invalidErr("offset and max_bytes must not be negative")
	}
	if maxBytes == 0 {
		maxBytes = defaultReadBytes
	}
	if maxBytes > maxReadBytes {
		return ReadFileResult{}, invalidErr("max_bytes %d is more than %d; read in parts with offset, or use copy_out", maxBytes, maxReadBytes)
	}
	clean, err := ResolvePath(p)
	if err != nil {
		return ReadFileResult{}, err
	}
	done, err := e.mem.Take(ctx, maxBytes)
	if err != nil {
		return ReadFileResult{}, err
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
	b := e.box(sb)
	target, err := b.Resolve(ctx, clean, true)
	if err != nil {
		return ReadFileResult{}, err
	}
	r, err := b.Read(ctx, target, offset, maxBytes)
	return ReadFileResult{Path: target, Data: r.Data, Size: r.Size, Offset: offset, Truncated: r.Truncated}, err
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
	Entries []backend.FileEntry
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
	return listByTar(ctx, e.box(sb), clean, req.Recursive)
}

// listByTar is ListFiles through the sandbox's tar (or the engine's
// archive), for a sandbox without an agent.
func listByTar(ctx context.Context, b *sbfiles.Box, clean string, recursive bool) (ListFilesResult, error) {
	target, err := b.Resolve(ctx, clean, true)
	if err != nil {
		return ListFilesResult{}, err
	}
	r, err := b.List(ctx, sbfiles.ListRequest{Path: target, Recursive: recursive, MaxEntries: maxListEntries, MaxNames: maxListNameBytes})
	return ListFilesResult{Entries: r.Entries, Truncated: r.Truncated}, err
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

// CopyInResult is what copy_in reports.
type CopyInResult struct {
	Files    int            `json:"files"`
	Bytes    int64          `json:"bytes"`
	DestPath string         `json:"dest_path,omitempty"`
	Dirs     int            `json:"dirs"`
	Symlinks int            `json:"symlinks"`
	Skipped  map[string]int `json:"skipped,omitempty"`
}

// CopyOutResult is what copy_out reports.
type CopyOutResult struct {
	Files    int            `json:"files"`
	Bytes    int64          `json:"bytes"`
	HostPath string         `json:"host_path,omitempty"`
	Dirs     int            `json:"dirs"`
	Symlinks int            `json:"symlinks"`
	Skipped  map[string]int `json:"skipped,omitempty"`
	// SkippedLinks lists copy_out's symlinks that were not made on the
	// host (all of them unless files.copy_out_links is on), with their
	// targets.
	SkippedLinks []hostfs.SkippedLink `json:"skipped_links,omitempty"`
}

// CopyIn copies a host file or directory (below files.read_roots) into the
// sandbox, placing it at DestPath (default /workspace/<base name>).
func (e *Engine) CopyIn(ctx context.Context, id string, req CopyInRequest) (CopyInResult, error) {
	hostPath, dest, includeIgnored := req.HostPath, req.DestPath, req.IncludeIgnored
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return CopyInResult{}, err
	}
	f := hostcopy.Fence(e.cfg.Current())
	src, err := f.ReadPath(hostPath)
	if err != nil {
		return CopyInResult{}, e.classes().HostErr(err)
	}
	if dest == "" {
		dest = path.Join(backend.Workspace, hostcopy.BaseName(src))
	}
	clean, err := ResolvePath(dest)
	if err != nil {
		return CopyInResult{}, err
	}
	if clean == backend.Workspace || clean == "/tmp" {
		return CopyInResult{}, invalidErr("dest_path %s names the area itself; give the path the copy should have, such as %s/%s", clean, clean, hostcopy.BaseName(src))
	}
	uid, gid := hostcopy.UserIDs(sb.User)
	plan, err := f.Plan(ctx, src, hostfs.PackOptions{Name: path.Base(clean), UID: uid, GID: gid, IncludeIgnored: includeIgnored})
	if err != nil {
		return CopyInResult{}, e.classes().HostErr(err)
	}
	e.begin(sb)
	defer e.end(sb)
	dest, err = e.box(sb).CopyIn(ctx, clean, plan)
	if err != nil {
		return CopyInResult{}, err
	}
	st := plan.Stats
	sb.transcript.add("copy_in", fmt.Sprintf("%s -> %s (%d files, %d bytes)", src, dest, st.Files, st.Bytes), nil, "")
	return CopyInResult{Files: st.Files, Dirs: st.Dirs, Symlinks: st.Symlinks, Bytes: st.Bytes, DestPath: dest, Skipped: st.Skipped}, nil
}

// CopyOut copies a sandbox file or directory to the host, below
// files.write_root (default <write root>/<sandbox id>/<base name>).
func (e *Engine) CopyOut(ctx context.Context, id string, req CopyOutRequest) (CopyOutResult, error) {
	sb, err := e.Lookup(ctx, id)
	if err != nil {
		return CopyOutResult{}, err
	}
	clean, err := ResolvePath(req.Path)
	if err != nil {
		return CopyOutResult{}, err
	}
	e.begin(sb)
	defer e.end(sb)
	res, src, err := e.copyOut(ctx, sb, clean, req.HostPath, req.Overwrite)
	if err != nil {
		return CopyOutResult{}, err
	}
	sb.transcript.add("copy_out", fmt.Sprintf("%s -> %s (%d files, %d bytes)", src, res.HostPath, res.Files, res.Bytes), nil, "")
	return res, nil
}

// copyOut copies the sandbox path clean to the host through copy_out's
// write fence and returns what it copied and the resolved source.
func (e *Engine) copyOut(ctx context.Context, sb *Sandbox, clean, hostPath string, overwrite bool) (CopyOutResult, string, error) {
	cfg := e.cfg.Current()
	r, err := e.box(sb).CopyOut(ctx, sbfiles.CopyOutRequest{Path: clean, Fence: hostcopy.Fence(cfg), HostPath: hostPath, Dir: sb.ID, Overwrite: overwrite, Links: cfg.Files.CopyOutLinks})
	if err != nil {
		return CopyOutResult{}, "", err
	}
	st := r.Stats
	return CopyOutResult{Files: st.Files, Dirs: st.Dirs, Symlinks: st.Symlinks, Bytes: st.Bytes, HostPath: r.HostPath, Skipped: st.Skipped, SkippedLinks: st.SkippedLinks}, r.Src, nil
}

// box is sb's file system for the file tools: the engine's exec (through
// the agent where it runs), its tar, its error classes.
func (e *Engine) box(sb *Sandbox) *sbfiles.Box {
	uid, gid := hostcopy.UserIDs(sb.User)
	return &sbfiles.Box{
		Backend: e.be, Container: sb.ContainerID, User: sb.User, UID: uid, GID: gid,
		WorkspaceMB: sb.Limits.WorkspaceMB, Env: sbfiles.ServerEnv, Timeout: e.tarTimeout(),
		Tar: func(ctx context.Context) (string, error) {
			p, err := e.toolPath(ctx, sb, "tar")
			if errors.Is(err, sbfiles.ErrNoTool) {
				return "", nil
			}
			return p, err
		},
		Exec: func(ctx context.Context, spec backend.ExecSpec) (backend.ExecStatus, error) {
			return e.execIn(ctx, sb, spec)
		},
		Gone:    func(ctx context.Context, err error) error { return e.containerGone(ctx, sb, err) },
		Classes: e.classes(),
	}
}

func (e *Engine) classes() sbfiles.Classes {
	return sbfiles.Classes{Invalid: ErrInvalid, Policy: ErrPolicy, NotFound: ErrNotFound}
}

// tarTimeout bounds the file tools' tar in a sandbox, as
// limits.exec_timeout_seconds bounds a command: it runs as the sandbox
// user, whose code can stop it (or the agent that started it).
func (e *Engine) tarTimeout() time.Duration {
	return time.Duration(e.cfg.Current().Limits.ExecTimeoutSeconds) * time.Second
}
