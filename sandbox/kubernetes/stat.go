package kubernetes

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"path"
	"strconv"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// statScript prints "SIZE RAWMODE" of $1 (stat) or "SIZE OCTALPERM TYPE"
// (find -printf: GNU stat fails on gVisor, whose statx refuses its
// flags), without following a final symlink, then, for a symlink, the
// absolute path it resolves to; a missing path exits 3.
const statScript = `[ -e "$1" ] || [ -L "$1" ] || exit 3
stat -c '%s %f' "$1" 2>/dev/null || find "$1" -maxdepth 0 -printf '%s %m %y\n' || exit 4
[ ! -L "$1" ] || readlink -f "$1" || echo`

// StatPath describes a path in the container with the image's stat.
func (b *Backend) StatPath(ctx context.Context, containerID, p string) (backend.PathStat, error) {
	if !path.IsAbs(p) {
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %q: not an absolute path", p)
	}
	var out, stderr bytes.Buffer
	st, err := b.Exec(ctx, containerID, backend.ExecSpec{
		Cmd:    []string{"/bin/sh", "-c", statScript, "mcp-sandbox-stat", p},
		Stdout: &backend.LimitedBuffer{B: &out, N: 8192}, Stderr: &backend.LimitedBuffer{B: &stderr, N: 4096},
	})
	if err != nil {
		return backend.PathStat{}, err
	}
	switch st.ExitCode {
	case 0:
	case 3:
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %s: %w", p, fs.ErrNotExist)
	default:
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %s: exit %d: %s", p, st.ExitCode, bytes.TrimSpace(stderr.Bytes()))
	}
	first, rest, _ := strings.Cut(out.String(), "\n")
	size, mode, err := parseStat(first)
	if err != nil {
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %s: %w", p, err)
	}
	ps := backend.PathStat{Name: path.Base(p), Size: size, Mode: mode}
	if ps.Mode&fs.ModeSymlink != 0 {
		ps.LinkTarget = strings.TrimSpace(rest)
	}
	return ps, nil
}

// fileMode turns a raw st_mode into an fs.FileMode.
func fileMode(m uint32) fs.FileMode {
	mode := fs.FileMode(m & 0o777)
	switch m & 0o170000 {
	case 0o040000:
		mode |= fs.ModeDir
	case 0o120000:
		mode |= fs.ModeSymlink
	case 0o010000:
		mode |= fs.ModeNamedPipe
	case 0o140000:
		mode |= fs.ModeSocket
	case 0o020000:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case 0o060000:
		mode |= fs.ModeDevice
	}
	if m&0o4000 != 0 {
		mode |= fs.ModeSetuid
	}
	if m&0o2000 != 0 {
		mode |= fs.ModeSetgid
	}
	if m&0o1000 != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

// findTypes are find's %y letters as the type bits of a raw mode.
var findTypes = map[string]uint32{"f": 0o100000, "d": 0o040000, "l": 0o120000, "p": 0o010000, "s": 0o140000, "c": 0o020000, "b": 0o060000}

// parseStat reads statScript's first line in either form.
func parseStat(line string) (int64, fs.FileMode, error) {
	f := strings.Fields(line)
	if len(f) != 2 && len(f) != 3 {
		return 0, 0, fmt.Errorf("unreadable answer %q", line)
	}
	size, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return 0, 0, fmt.Errorf("unreadable answer %q", line)
	}
	if len(f) == 2 {
		raw, err := strconv.ParseUint(f[1], 16, 32)
		if err != nil {
			return 0, 0, fmt.Errorf("unreadable answer %q", line)
		}
		return size, fileMode(uint32(raw)), nil
	}
	perm, err := strconv.ParseUint(f[1], 8, 32)
	typ, ok := findTypes[f[2]]
	if err != nil || !ok {
		return 0, 0, fmt.Errorf("unreadable answer %q", line)
	}
	return size, fileMode(typ | uint32(perm)&0o7777), nil
}
