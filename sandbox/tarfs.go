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
	rel := strings.TrimPrefix(strings.TrimPrefix(cur, Workspace), "/")
	if rel == "" {
		return Workspace, nil
	}
	parts := strings.Split(rel, "/")
	done := Workspace
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
// itself.
func (e *Engine) tarFrom(ctx context.Context, sb *Sandbox, p string) (io.ReadCloser, error) {
	if !inTmp(p) {
		rc, err := e.be.CopyFrom(ctx, sb.ContainerID, p)
		if err != nil {
			if strings.Contains(err.Error(), "No such container:path") || strings.Contains(err.Error(), "Could not find the file") {
				return nil, invalidErr("%s does not exist", p)
			}
			return nil, e.containerGone(ctx, sb, err)
		}
		return rc, nil
	}
	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	go func() {
		status, err := e.be.Exec(ctx, sb.ContainerID, ExecSpec{
			Cmd:    []string{"tar", "-c", "-f", "-", "-C", path.Dir(p), "--", path.Base(p)},
			User:   sb.User,
			Stdout: pw,
			Stderr: &limitedBuffer{b: &stderr, n: 4096},
		})
		if err == nil && status.ExitCode != 0 {
			err = tarError(p, status.ExitCode, stderr.String())
		}
		pw.CloseWithError(err)
	}()
	return pr, nil
}

// tarInto extracts a tar stream into dir (resolved).
func (e *Engine) tarInto(ctx context.Context, sb *Sandbox, dir string, r io.Reader) error {
	if !inTmp(dir) {
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
	var stderr bytes.Buffer
	status, err := e.be.Exec(ctx, sb.ContainerID, ExecSpec{
		Cmd:    []string{"tar", "-x", "-f", "-", "-C", dir},
		User:   sb.User,
		Stdin:  r,
		Stderr: &limitedBuffer{b: &stderr, n: 4096},
	})
	if err != nil {
		return e.containerGone(ctx, sb, err)
	}
	if status.ExitCode != 0 {
		return tarError(dir, status.ExitCode, stderr.String())
	}
	return nil
}

func tarError(p string, code int, stderr string) error {
	s := strings.TrimSpace(stderr)
	switch {
	case code == 127 || strings.Contains(s, "not found"):
		if strings.Contains(s, "tar") {
			return invalidErr("the image has no tar, which the file tools need for /tmp; use /workspace instead")
		}
		return invalidErr("%s does not exist", p)
	case strings.Contains(s, "No such file") || strings.Contains(s, "can't stat"):
		return invalidErr("%s does not exist", p)
	case strings.Contains(s, "No space left"):
		return fmt.Errorf("%w: /tmp in the sandbox is full", ErrPolicy)
	case strings.Contains(s, "Permission denied"):
		return fmt.Errorf("%w: permission denied for %s", ErrPolicy, p)
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

// tarOfDirs returns a tar stream of the directories of rel (slash path),
// owned by the sandbox user.
func tarOfDirs(user, rel string) *bytes.Buffer {
	uid, gid := userIDs(user)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	parts := strings.Split(rel, "/")
	for i := range parts {
		_ = tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: strings.Join(parts[:i+1], "/") + "/", Mode: 0o755, Uid: uid, Gid: gid, ModTime: time.Now()})
	}
	_ = tw.Close()
	return &buf
}
