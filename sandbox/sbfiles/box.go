package sbfiles

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Classes are the engine's error classes the file tools' errors wrap.
type Classes struct {
	// Invalid: a malformed request (a missing path, a directory read).
	Invalid error
	// Policy: what the sandbox user may not do, or a path out of the areas.
	Policy error
	// NotFound: the sandbox is gone (Gone's class), kept as it is.
	NotFound error
}

// Box is one sandbox's file system as the file tools reach it.
type Box struct {
	Backend   backend.Backend
	Container string
	// User is the sandbox user, "uid:gid"; UID and GID are its numbers.
	User     string
	UID, GID int
	// WorkspaceMB is limits.workspace_mb, named when the workspace is full.
	WorkspaceMB int
	// Env is the fixed environment the sandbox's tar runs with.
	Env []string
	// Timeout bounds the sandbox's tar (limits.exec_timeout_seconds).
	Timeout time.Duration
	// Tar returns the image's tar, "" when the image has none.
	Tar func(ctx context.Context) (string, error)
	// Exec runs a command in the sandbox (through its agent or the engine).
	Exec func(ctx context.Context, spec backend.ExecSpec) (backend.ExecStatus, error)
	// Gone words an engine error on the container (it may be gone).
	Gone func(ctx context.Context, err error) error
	Classes
}

func (b *Box) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", b.Invalid, fmt.Sprintf(format, args...))
}

// InTmp reports whether p is in /tmp, where the engine's archive API
// cannot reach (a tmpfs mount).
func InTmp(p string) bool { return p == "/tmp" || strings.HasPrefix(p, "/tmp/") }

// Area returns the area root p is in: /workspace or /tmp.
func Area(p string) string {
	if InTmp(p) {
		return "/tmp"
	}
	return backend.Workspace
}

// maxLinkHops bounds how many symlinks one path may go through.
const maxLinkHops = 16

// Resolve follows symlinks in p (clean, inside the areas) component by
// component and refuses a link that leads out of /workspace and /tmp. The
// engine's archive API reads as root and follows links in the middle of a
// path, so without this a link such as /workspace/d -> /etc would let
// read_file return /workspace/d/shadow. A missing final component is fine
// (write_file creates it); followLast decides whether a final link is
// followed. In /tmp the sandbox's own tar runs as the sandbox user, whose
// permissions apply, so paths there are not resolved.
func (b *Box) Resolve(ctx context.Context, p string, followLast bool) (string, error) {
	hops := 0
	cur := p
restart:
	if InTmp(cur) {
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
		st, err := b.Backend.StatPath(ctx, b.Container, next)
		if errors.Is(err, fs.ErrNotExist) {
			// Nothing further exists: no link can be in the way.
			return path.Join(append([]string{done}, parts[i:]...)...), nil
		}
		if err != nil {
			return "", b.Gone(ctx, err)
		}
		if st.Mode&fs.ModeSymlink == 0 || (last && !followLast) {
			done = next
			continue
		}
		hops++
		target := st.LinkTarget
		if hops > maxLinkHops || target == "" {
			return "", b.invalid("%s: too many levels of symbolic links", p)
		}
		if !inAreas(target) {
			return "", fmt.Errorf("%w: %s is a symlink to %s, outside /workspace and /tmp; the file tools do not follow it", b.Policy, next, target)
		}
		cur = path.Join(append([]string{target}, parts[i+1:]...)...)
		goto restart
	}
	return done, nil
}

// inAreas reports whether target is absolute and, cleaned, inside
// /workspace or /tmp.
func inAreas(target string) bool {
	if !strings.HasPrefix(target, "/") || strings.ContainsAny(target, "\x00\n\r") || len(target) > 4096 {
		return false
	}
	clean := path.Clean(target)
	for _, root := range []string{backend.Workspace, "/tmp"} {
		if clean == root || strings.HasPrefix(clean, root+"/") {
			return true
		}
	}
	return false
}
