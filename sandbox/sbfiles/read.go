package sbfiles

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
)

// ReadResult is the part of a file Read read.
type ReadResult struct {
	Data []byte
	// Size is the file's whole size.
	Size int64
	// Truncated says the file goes on past Data.
	Truncated bool
}

// Read reads up to maxBytes of the regular file p (resolved) from offset.
// Only the part asked for is read; closing the stream early stops the
// engine from sending the rest (a 10 GB file costs what was asked).
func (b *Box) Read(ctx context.Context, p string, offset, maxBytes int64) (ReadResult, error) {
	rc, err := b.TarFrom(ctx, p)
	if err != nil {
		return ReadResult{}, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := hostcopy.FirstHeader(tr, rc)
	if err != nil {
		return ReadResult{}, b.fileErr("read", p, err)
	}
	switch h.Typeflag {
	case tar.TypeDir:
		return ReadResult{}, b.invalid("%s is a directory; list it with list_files", p)
	case tar.TypeReg:
	default:
		return ReadResult{}, b.invalid("%s is not a regular file", p)
	}
	res := ReadResult{Size: h.Size}
	if offset > h.Size {
		return res, b.invalid("offset %d is past the end of %s (%d bytes)", offset, p, h.Size)
	}
	if _, err := io.CopyN(io.Discard, tr, offset); err != nil {
		return res, fmt.Errorf("read %s: %w", p, err)
	}
	var buf bytes.Buffer
	buf.Grow(int(min(maxBytes, h.Size-offset)) + bytes.MinRead) // no copies as it grows
	if _, err := io.CopyN(&buf, tr, maxBytes); err != nil && err != io.EOF {
		return res, fmt.Errorf("read %s: %w", p, err)
	}
	res.Data = buf.Bytes()
	res.Truncated = offset+int64(len(res.Data)) < h.Size
	return res, nil
}

// ReadAll reads the whole regular file p (resolved), at most limit bytes.
func (b *Box) ReadAll(ctx context.Context, p string, limit int64) ([]byte, error) {
	rc, err := b.TarFrom(ctx, p)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := hostcopy.FirstHeader(tr, rc)
	if err != nil {
		return nil, b.fileErr("read", p, err)
	}
	if h.Typeflag != tar.TypeReg {
		return nil, b.invalid("%s is not a regular file", p)
	}
	if h.Size > limit {
		return nil, b.invalid("%s is %d bytes, more than %d", p, h.Size, limit)
	}
	var buf bytes.Buffer
	_, err = io.Copy(&buf, tr)
	return buf.Bytes(), err
}

// ListRequest says what List lists and within which bounds.
type ListRequest struct {
	// Path is the directory (or file), resolved.
	Path      string
	Recursive bool
	// MaxEntries and MaxNames bound the entries and the bytes of their
	// names and link targets kept.
	MaxEntries, MaxNames int
}

// ListResult is a listing.
type ListResult struct {
	Entries []backend.FileEntry
	// Truncated says the listing stopped at its bounds.
	Truncated bool
}

// List lists a directory from the tar headers of the sandbox's tar (or
// the engine's archive), which every image can answer; a file lists as
// itself.
func (b *Box) List(ctx context.Context, req ListRequest) (ListResult, error) {
	target := req.Path
	rc, err := b.TarFrom(ctx, target)
	if err != nil {
		return ListResult{}, err
	}
	defer rc.Close()
	tr := tar.NewReader(rc)
	h, err := hostcopy.FirstHeader(tr, rc)
	if err != nil {
		return ListResult{}, b.fileErr("list", target, err)
	}
	parent := path.Dir(target)
	if h.Typeflag != tar.TypeDir {
		return ListResult{Entries: []backend.FileEntry{entryOf(path.Join(parent, h.Name), h)}}, nil
	}
	var res ListResult
	// The names come from the sandbox (a tree of long, deep names):
	// they are counted before they are kept, as the agent counts its
	// listing.
	names := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return res, nil
		}
		if err != nil {
			return res, b.fileErr("list", target, err)
		}
		name := path.Join(parent, h.Name)
		if !req.Recursive && path.Dir(name) != target {
			continue
		}
		names += len(name) + len(h.Linkname)
		if len(res.Entries) >= req.MaxEntries || names > req.MaxNames {
			res.Truncated = true
			return res, nil
		}
		res.Entries = append(res.Entries, entryOf(name, h))
	}
}

// fileErr keeps the engine's classes of an error from the sandbox's tar
// and words the rest.
func (b *Box) fileErr(op, p string, err error) error {
	if errors.Is(err, b.Invalid) || errors.Is(err, b.Policy) || errors.Is(err, b.NotFound) {
		return err
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

func entryOf(name string, h *tar.Header) backend.FileEntry {
	fe := backend.FileEntry{
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
