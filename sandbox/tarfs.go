package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostcopy"
)

// The file tools move tar streams. In /workspace (a named volume) they use
// the engine's archive API; /tmp is a tmpfs mount, which that API cannot
// reach, so there a tar process inside the sandbox, run as the sandbox user
// with its arguments as a vector (never a shell string), does the work.

func inTmp(p string) bool { return p == "/tmp" || strings.HasPrefix(p, "/tmp/") }

// maxLinkHops bounds how many symlinks one path may go through.
const maxLinkHops = 16

// resolve follows symlinks in p (clean, inside the fences) component by
// component and refuses a link that leads out of /workspace and /tmp. The
// engine's archive API reads as root and follows links in the middle of a
// path, so without this a link such as /workspace/d -> /etc would let
// read_file return /workspace/d/shadow. A missing final component is fine
// (write_file creates it); followLast decides whether a final link is
// followed. In /tmp the sandbox's own tar runs as the sandbox user, whose
// permissions apply, so paths there are not resolved.
func (e *Engine) resolve(ctx context.Context, sb *Sandbox, p string, followLast bool) (string, error) {
	hops := 0
	cur := p
restart:
	if inTmp(cur) {
		return cur, nil
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(cur, backend.Workspace), "/")
	if rel == "" {
		return backend.Workspace, nil
	}
	parts := strings.Split(rel, "/")
	done := backend.Workspace
	for i, part := range parts {
		next := path.Join(done, part)
		last := i == len(parts)-1
		st, err := e.be.StatPath(ctx, sb.ContainerID, next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing further exists: no link can be in the way.
			return path.Join(append([]string{done}, parts[i:]...)...), nil
		}
		if err != nil {
			return "", e.containerGone(ctx, sb, err)
		}
		if st.Mode&fs.ModeSymlink == 0 || (last && !followLast) {
			done = next
			continue
		}
		hops++
		target := st.LinkTarget
		if hops > maxLinkHops || target == "" {
			return "", invalidErr("%s: too many levels of symbolic links", p)
		}
		if _, err := ResolvePath(target); err != nil || !strings.HasPrefix(target, "/") {
			return "", fmt.Errorf("%w: %s is a symlink to %s, outside /workspace and /tmp; the file tools do not follow it", ErrPolicy, next, target)
		}
		cur = path.Join(append([]string{target}, parts[i+1:]...)...)
		goto restart
	}
	return done, nil
}

// tarFrom returns a tar stream of p (resolved), whose first entry is p
// itself. It is made by the image's tar running as the sandbox user (with
// the server's fixed environment), so it holds nothing the sandbox user
// could not read itself, whatever link is swapped in on the way. An image
// without tar is read through the engine's archive API, which reads as
// root: then only entries the sandbox user could read are passed on.
func (e *Engine) tarFrom(ctx context.Context, sb *Sandbox, p string) (io.ReadCloser, error) {
	tarBin, err := e.toolPath(ctx, sb, "tar")
	if errors.Is(err, errNoTool) {
		if inTmp(p) {
			return nil, invalidErr("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		rc, err := e.be.CopyFrom(ctx, sb.ContainerID, p)
		if err != nil {
			if strings.Contains(err.Error(), "No such container:path") || strings.Contains(err.Error(), "Could not find the file") {
				return nil, invalidErr("%s does not exist", p)
			}
			return nil, e.containerGone(ctx, sb, err)
		}
		uid, gid := hostcopy.UserIDs(sb.User)
		return hostcopy.ReadableBy(rc, uid, gid, ErrPolicy), nil
	}
	if err != nil {
		return nil, err
	}
	parent := ctx
	ctx, cancel := context.WithTimeout(ctx, e.tarTimeout())
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		status, err := e.execIn(ctx, sb, backend.ExecSpec{
			Cmd:    []string{tarBin, "-c", "-f", "-", "-C", path.Dir(p), "--", path.Base(p)},
			Env:    serverEnv,
			User:   sb.User,
			Stdout: pw,
			Stderr: &limitedBuffer{b: &stderr, n: 4096},
		})
		if err == nil && status.ExitCode != 0 {
			err = tarError(p, status.ExitCode, stderr.String())
		}
		pw.CloseWithError(e.tarTimedOut(parent, ctx, err))
	}()
	// Closing the stream early (read_file of a part) ends the tar too.
	return hostcopy.CloseCancels(pr, cancel, done), nil
}

// tarInto extracts a tar stream into dir (resolved), with the image's tar
// running as the sandbox user, so that nothing is written that the sandbox
// user could not write itself. An image without tar is written through
// the engine's archive API (into /workspace only; the entries carry the
// sandbox user as owner).
func (e *Engine) tarInto(ctx context.Context, sb *Sandbox, dir string, r io.Reader) error {
	tarBin, err := e.toolPath(ctx, sb, "tar")
	if errors.Is(err, errNoTool) {
		if inTmp(dir) {
			return invalidErr("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		if err := e.be.CopyTo(ctx, sb.ContainerID, dir, r); err != nil {
			msg := err.Error()
			switch {
			case strings.Contains(msg, "no space left"):
				return fmt.Errorf("%w: the sandbox's workspace is full (limits.workspace_mb = %d)", ErrPolicy, sb.Limits.WorkspaceMB)
			case strings.Contains(msg, "read-only"):
				return fmt.Errorf("%w: %s is not writable: only /workspace and /tmp are", ErrPolicy, dir)
			case strings.Contains(msg, "Could not find the file") || strings.Contains(msg, "no such file or directory"):
				return invalidErr("%s does not exist in the sandbox", dir)
			}
			return e.containerGone(ctx, sb, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	return e.untarAsUser(ctx, sb, tarBin, dir, r)
}

// untarAsUser extracts r into dir with the image's tar run as the sandbox
// user: what it writes, it writes with that user's rights, so a link the
// sandbox swaps into the way leads nowhere its own code could not write.
func (e *Engine) untarAsUser(ctx context.Context, sb *Sandbox, tarBin, dir string, r io.Reader) error {
	tctx, cancel := context.WithTimeout(ctx, e.tarTimeout())
	defer cancel()
	var stderr bytes.Buffer
	status, err := e.execIn(tctx, sb, backend.ExecSpec{
		// No owner or mode from the stream beyond the user's own rights:
		// tar run by an ordinary user cannot give files away or set
		// setuid bits.
		Cmd:    []string{tarBin, "-x", "-o", "-f", "-", "-C", dir},
		Env:    serverEnv,
		User:   sb.User,
		Stdin:  r,
		Stderr: &limitedBuffer{b: &stderr, n: 4096},
	})
	if err != nil {
		if terr := e.tarTimedOut(ctx, tctx, err); terr != err {
			return terr
		}
		return e.containerGone(ctx, sb, err)
	}
	if status.ExitCode != 0 {
		if strings.Contains(stderr.String(), "No space left") && !inTmp(dir) {
			return fmt.Errorf("%w: the sandbox's workspace is full (limits.workspace_mb = %d)", ErrPolicy, sb.Limits.WorkspaceMB)
		}
		return tarError(dir, status.ExitCode, stderr.String())
	}
	return nil
}

// tarTimeout bounds the file tools' tar in a sandbox, as
// limits.exec_timeout_seconds bounds a command: it runs as the sandbox
// user, whose code can stop it (or the agent that started it).
func (e *Engine) tarTimeout() time.Duration {
	return time.Duration(e.cfg.Current().Limits.ExecTimeoutSeconds) * time.Second
}

// tarTimedOut words err when the tar's own timeout (tctx, made from
// parent) ended it, and returns err unchanged otherwise.
func (e *Engine) tarTimedOut(parent, tctx context.Context, err error) error {
	if err == nil || parent.Err() != nil || !errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("the sandbox's tar did not finish within %s (limits.exec_timeout_seconds) and was killed: something in the sandbox stopped it, or the copy is too large for that time", e.tarTimeout())
}

func tarError(p string, code int, stderr string) error {
	s := strings.TrimSpace(stderr)
	switch {
	case code == 127 || strings.Contains(s, "not found"):
		if strings.Contains(s, "tar") {
			return invalidErr("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		return invalidErr("%s does not exist", p)
	case strings.Contains(s, "Permission denied"):
		// Before "No such file": a directory tar could not make is why
		// the files inside it are missing.
		return fmt.Errorf("%w: permission denied for %s", ErrPolicy, p)
	case strings.Contains(s, "No such file") || strings.Contains(s, "can't stat"):
		return invalidErr("%s does not exist", p)
	case strings.Contains(s, "No space left"):
		return fmt.Errorf("%w: /tmp in the sandbox is full", ErrPolicy)
	}
	return fmt.Errorf("tar in the sandbox failed for %s (exit %d): %s", p, code, s)
}

// limitedBuffer keeps the first n bytes written to it.
type limitedBuffer struct {
	b *bytes.Buffer
	n int
}

func (l *limitedBuffer) Write(p []byte) (int, error) {
	if room := l.n - l.b.Len(); room > 0 {
		l.b.Write(p[:min(room, len(p))])
	}
	return len(p), nil
}
