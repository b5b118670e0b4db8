package kubernetes

import (
	"archive/tar"
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"k8s.io/client-go/tools/remotecommand"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// CopyTo extracts a tar stream into dir inside the container with the
// image's tar (`tar -x` in an exec, as the sandbox user). Every entry is
// checked here first (fenceTar): an absolute name, a ".." component, a
// hard link out of the archive's tree, an entry below a symlink the same
// archive made, or a device or fifo is refused with an error, so the
// container's tar only sees entries that land under dir. (A symlink
// already in the sandbox can still lead its tar elsewhere in the
// container, never out of it.)
func (b *Backend) CopyTo(ctx context.Context, containerID, dir string, tr io.Reader) error {
	if !path.IsAbs(dir) {
		return fmt.Errorf("kubernetes: copy into %q: not an absolute path", dir)
	}
	ex, err := b.executor(containerID, []string{"/bin/sh", "-c", `cd "$1" && exec tar -x -f -`, "mcp-sandbox-copy-in", dir}, true)
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	fenced := make(chan error, 1)
	go func() {
		err := fenceTar(tr, pw)
		pw.CloseWithError(err)
		fenced <- err
	}()
	var stderr bytes.Buffer
	err = ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: pr, Stdout: io.Discard, Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096}})
	pr.CloseWithError(errors.New("copy ended"))
	if ferr := <-fenced; ferr != nil && !errors.Is(ferr, io.ErrClosedPipe) {
		return fmt.Errorf("kubernetes: copy into %s: %w", dir, ferr)
	}
	st, err := exitStatus(err)
	if err != nil {
		return b.wrap("copy into "+dir, err)
	}
	if st.ExitCode != 0 {
		return fmt.Errorf("kubernetes: copy into %s: tar exited %d: %s", dir, st.ExitCode, bytes.TrimSpace(stderr.Bytes()))
	}
	return nil
}

// fenceTar copies the archive from r to w entry by entry, refusing any
// entry that would land outside the directory it is extracted in.
func fenceTar(r io.Reader, w io.Writer) error {
	tr, tw := tar.NewReader(r), tar.NewWriter(w)
	links := map[string]bool{} // symlinks this archive made
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return tw.Close()
		}
		if err != nil {
			return err
		}
		name, err := entryName(h.Name)
		if err != nil {
			return err
		}
		for p := path.Dir(name); p != "."; p = path.Dir(p) {
			if links[p] {
				return fmt.Errorf("entry %q is below the archive's symlink %q", h.Name, p)
			}
		}
		nh := &tar.Header{Name: name, Mode: h.Mode & 0o1777, Uid: h.Uid, Gid: h.Gid, ModTime: h.ModTime, Typeflag: h.Typeflag}
		switch h.Typeflag {
		case tar.TypeReg, tar.TypeDir:
			nh.Size = h.Size
		case tar.TypeSymlink:
			nh.Linkname = h.Linkname
		case tar.TypeLink:
			if nh.Linkname, err = entryName(h.Linkname); err != nil {
				return fmt.Errorf("hard link %q: %w", h.Name, err)
			}
		default:
			return fmt.Errorf("entry %q: type %q is not copied", h.Name, h.Typeflag)
		}
		delete(links, name) // (a later entry of that name replaces the link)
		if h.Typeflag == tar.TypeSymlink {
			links[name] = true
		}
		if err := tw.WriteHeader(nh); err != nil {
			return err
		}
		if _, err := io.Copy(tw, tr); err != nil {
			return err
		}
	}
}

// entryName is an archive entry's name made clean, or an error for one that
// is absolute or climbs out with "..".
func entryName(n string) (string, error) {
	if n == "" || strings.HasPrefix(n, "/") {
		return "", fmt.Errorf("entry name %q is absolute or empty", n)
	}
	for _, part := range strings.Split(n, "/") {
		if part == ".." {
			return "", fmt.Errorf("entry name %q climbs out with ..", n)
		}
	}
	c := path.Clean(n)
	if c == "." {
		return "", fmt.Errorf("entry name %q names the target itself", n)
	}
	return c, nil
}

// CopyFrom returns a tar stream of path inside the container, made by the
// image's tar (`tar -c`, which stores symlinks as symlinks), entries named
// from its base name down. The stream is the sandbox's and hostile: the
// engine's reader is the fence.
func (b *Backend) CopyFrom(ctx context.Context, containerID, p string) (io.ReadCloser, error) {
	p = path.Clean(p)
	if !path.IsAbs(p) || p == "/" {
		return nil, fmt.Errorf("kubernetes: copy from %q: not an absolute path below /", p)
	}
	ex, err := b.executor(containerID, []string{"/bin/sh", "-c", `cd "$1" && { [ -e "$2" ] || [ -L "$2" ]; } || { echo "$1/$2: no such file" >&2; exit 3; }; exec tar -c -f - -- "$2"`, "mcp-sandbox-copy-out", path.Dir(p), path.Base(p)}, false)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancel(ctx)
	pr, pw := io.Pipe()
	go func() {
		var stderr bytes.Buffer
		st, err := exitStatus(ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdout: pw, Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096}}))
		if err == nil && st.ExitCode != 0 {
			err = fmt.Errorf("tar exited %d: %s", st.ExitCode, bytes.TrimSpace(stderr.Bytes()))
		}
		if err != nil {
			err = fmt.Errorf("kubernetes: copy from %s: %w", p, err)
		}
		pw.CloseWithError(err)
	}()
	br := bufio.NewReader(pr)
	// The first byte, or the error: a missing path fails here.
	if _, err := br.Peek(1); err != nil {
		cancel()
		pr.Close()
		if err == io.EOF {
			err = fmt.Errorf("kubernetes: copy from %s: empty archive", p)
		}
		return nil, err
	}
	return &copyOut{Reader: br, pr: pr, cancel: cancel}, nil
}

type copyOut struct {
	*bufio.Reader
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (c *copyOut) Close() error {
	c.cancel()
	return c.pr.Close()
}

var _ backend.Backend = (*Backend)(nil)
