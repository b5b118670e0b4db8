package sbfiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
)

// The file tools move tar streams. In /workspace (a named volume) they use
// the engine's archive API; /tmp is a tmpfs mount, which that API cannot
// reach, so there a tar process inside the sandbox, run as the sandbox user
// with its arguments as a vector (never a shell string), does the work.

// TarFrom returns a tar stream of p (resolved), whose first entry is p
// itself. It is made by the image's tar running as the sandbox user (with
// the server's fixed environment), so it holds nothing the sandbox user
// could not read itself, whatever link is swapped in on the way. An image
// without tar is read through the engine's archive API, which reads as
// root: then only entries the sandbox user could read are passed on.
func (b *Box) TarFrom(ctx context.Context, p string) (io.ReadCloser, error) {
	tarBin, err := b.Tar(ctx)
	if err != nil {
		return nil, err
	}
	if tarBin == "" {
		if InTmp(p) {
			return nil, b.invalid("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		rc, err := b.Backend.CopyFrom(ctx, b.Container, p)
		if err != nil {
			if strings.Contains(err.Error(), "No such container:path") || strings.Contains(err.Error(), "Could not find the file") {
				return nil, b.invalid("%s does not exist", p)
			}
			return nil, b.Gone(ctx, err)
		}
		return hostcopy.ReadableBy(rc, b.UID, b.GID, b.Policy), nil
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, b.Timeout)
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, err := b.Exec(ctx, backend.ExecSpec{
			Cmd:    []string{tarBin, "-c", "-f", "-", "-C", path.Dir(p), "--", path.Base(p)},
			Env:    b.Env,
			User:   b.User,
			Stdout: pw,
			Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096},
		})
		if err == nil && status.ExitCode != 0 {
			err = b.tarError(p, status.ExitCode, stderr.String())
		}
		pw.CloseWithError(b.timedOut(parent, ctx, err))
	}()
	// Closing the stream early (read_file of a part) ends the tar too.
	return hostcopy.CloseCancels(pr, cancel, done), nil
}

// TarInto extracts a tar stream into dir (resolved), with the image's tar
// running as the sandbox user, so that nothing is written that the sandbox
// user could not write itself. An image without tar is written through
// the engine's archive API (into /workspace only; the entries carry the
// sandbox user as owner).
func (b *Box) TarInto(ctx context.Context, dir string, r io.Reader) error {
	tarBin, err := b.Tar(ctx)
	if err != nil {
		return err
	}
	if tarBin != "" {
		return b.Untar(ctx, tarBin, dir, r)
	}
	if InTmp(dir) {
		return b.invalid("the image has no tar, which the file tools need for /tmp; use /workspace instead")
	}
	if err := b.Backend.CopyTo(ctx, b.Container, dir, r); err != nil {
		msg := err.Error()
		switch {
		case strings.Contains(msg, "no space left"):
			return b.full()
		case strings.Contains(msg, "read-only"):
			return fmt.Errorf("%w: %s is not writable: only /workspace and /tmp are", b.Policy, dir)
		case strings.Contains(msg, "Could not find the file") || strings.Contains(msg, "no such file or directory"):
			return b.invalid("%s does not exist in the sandbox", dir)
		}
		return b.Gone(ctx, err)
	}
	return nil
}

func (b *Box) full() error {
	return fmt.Errorf("%w: the sandbox's workspace is full (limits.workspace_mb = %d)", b.Policy, b.WorkspaceMB)
}

// Untar extracts r into dir with the image's tar (tarBin) run as the
// sandbox user: what it writes, it writes with that user's rights, so a
// link the sandbox swaps into the way leads nowhere its own code could not
// write.
func (b *Box) Untar(ctx context.Context, tarBin, dir string, r io.Reader) error {
	tctx, cancel := context.WithTimeout(ctx, b.Timeout)
	defer cancel()
	var stderr bytes.Buffer
	status, err := b.Exec(tctx, backend.ExecSpec{
		// No owner or mode from the stream beyond the user's own rights:
		// tar run by an ordinary user cannot give files away or set
		// setuid bits.
		Cmd:    []string{tarBin, "-x", "-o", "-f", "-", "-C", dir},
		Env:    b.Env,
		User:   b.User,
		Stdin:  r,
		Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096},
	})
	if err != nil {
		if terr := b.timedOut(ctx, tctx, err); terr != err {
			return terr
		}
		return b.Gone(ctx, err)
	}
	if status.ExitCode != 0 {
		if strings.Contains(stderr.String(), "No space left") && !InTmp(dir) {
			return b.full()
		}
		return b.tarError(dir, status.ExitCode, stderr.String())
	}
	return nil
}

// timedOut words err when the tar's own timeout (tctx, made from parent)
// ended it, and returns err unchanged otherwise.
func (b *Box) timedOut(parent, tctx context.Context, err error) error {
	if err == nil || parent.Err() != nil || !errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("the sandbox's tar did not finish within %s (limits.exec_timeout_seconds) and was killed: something in the sandbox stopped it, or the copy is too large for that time", b.Timeout)
}

func (b *Box) tarError(p string, code int, stderr string) error {
	s := strings.TrimSpace(stderr)
	switch {
	case code == 127 || strings.Contains(s, "not found"):
		if strings.Contains(s, "tar") {
			return b.invalid("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		return b.invalid("%s does not exist", p)
	case strings.Contains(s, "Permission denied"):
		// Before "No such file": a directory tar could not make is why
		// the files inside it are missing.
		return fmt.Errorf("%w: permission denied for %s", b.Policy, p)
	case strings.Contains(s, "No such file") || strings.Contains(s, "can't stat"):
		return b.invalid("%s does not exist", p)
	case strings.Contains(s, "No space left"):
		return fmt.Errorf("%w: /tmp in the sandbox is full", b.Policy)
	}
	return fmt.Errorf("tar in the sandbox failed for %s (exit %d): %s", p, code, s)
}
