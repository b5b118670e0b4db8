package hostcopy

import (
	"archive/tar"
	"bytes"
	"context"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// BaseName is the name a copy of p gets when no destination is given
// ("copy" when p has none).
func BaseName(p string) string {
	b := path.Base(strings.ReplaceAll(p, `\`, "/"))
	if b == "/" || b == "." || b == "" {
		return "copy"
	}
	return b
}

// FirstHeader reads the first entry of a stream from tarFrom. A tar that
// failed (a missing file) still ends its archive cleanly before it exits,
// so an empty archive is answered with the producer's error.
func FirstHeader(tr *tar.Reader, rc io.Reader) (*tar.Header, error) {
	h, err := tr.Next()
	if err == io.EOF {
		return nil, StreamErr(rc, hostfs.ErrEmptyArchive)
	}
	return h, err
}

// StreamErr reads what is left of a stream from tarFrom for the error
// its producer ended it with, or returns def.
func StreamErr(rc io.Reader, def error) error {
	if _, err := io.Copy(io.Discard, io.LimitReader(rc, 1<<20)); err != nil {
		return err
	}
	return def
}

// CloseCancels returns pr, whose Close also cancels its producer and
// waits for it to be done.
func CloseCancels(pr *io.PipeReader, cancel context.CancelFunc, done <-chan struct{}) io.ReadCloser {
	return &cancelReader{PipeReader: pr, cancel: cancel, done: done}
}

// cancelReader ends its producer when closed.
type cancelReader struct {
	*io.PipeReader
	cancel context.CancelFunc
	done   <-chan struct{}
}

func (c *cancelReader) Close() error {
	c.cancel()
	err := c.PipeReader.Close()
	<-c.done
	return err
}

// DirsTar returns a tar stream of the directories of rel (slash path),
// owned by uid:gid (the sandbox user).
func DirsTar(uid, gid int, rel string) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	parts := strings.Split(rel, "/")
	for i := range parts {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.Join(parts[:i+1], "/") + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: time.Now()})
	}
	_ = tw.Close()
	return &buf
}

// FileTar returns a tar stream holding one file, name (slash path), with
// its parent directories, owned by uid:gid (the sandbox user).
func FileTar(uid, gid int, name string, data []byte) *bytes.Buffer {
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	now := time.Now()
	parts := strings.Split(name, "/")
	for i := 1; i < len(parts); i++ {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.Join(parts[:i], "/") + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: now})
	}
	_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644, Size: int64(len(data)), Uid: uid, Gid: gid, ModTime: now})
	_, _ = tw.Write(data)
	_ = tw.Close()
	return &buf
}

// ReadableBy passes on the entries of a tar stream read as root that the
// user uid:gid could read itself: its own, or readable by its group or by
// everyone. The first entry (what was asked for) must pass, else the
// stream fails with class (the engine's policy error); later ones that do
// not are left out, with their content.
func ReadableBy(rc io.ReadCloser, uid, gid int, class error) io.ReadCloser {
	pr, pw := io.Pipe()
	go func() {
		defer rc.Close()
		tr := tar.NewReader(rc)
		tw := tar.NewWriter(pw)
		first := true
		for {
			h, err := tr.Next()
			if err == io.EOF {
				pw.CloseWithError(tw.Close())
				return
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			ok := h.Uid == uid && h.Mode&0o400 != 0 || h.Gid == gid && h.Mode&0o040 != 0 || h.Mode&0o004 != 0
			if h.Typeflag == tar.TypeSymlink {
				ok = true // a link's own mode means nothing
			}
			if !ok {
				if first {
					pw.CloseWithError(fmt.Errorf("%w: %s is not readable by the sandbox user", class, h.Name))
					return
				}
				continue
			}
			first = false
			if err := tw.WriteHeader(h); err != nil {
				pw.CloseWithError(err)
				return
			}
			if _, err := io.Copy(tw, tr); err != nil {
				pw.CloseWithError(err)
				return
			}
		}
	}()
	return &pipeCloser{PipeReader: pr, inner: rc}
}

// pipeCloser closes the source of a filtered stream with it.
type pipeCloser struct {
	*io.PipeReader
	inner io.Closer
}

func (p *pipeCloser) Close() error {
	p.inner.Close()
	return p.PipeReader.Close()
}
