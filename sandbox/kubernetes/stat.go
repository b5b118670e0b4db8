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

// statScript prints "SIZE RAWMODE" of $1 without following a final
// symlink, then, for a symlink, the absolute path it resolves to; a
// missing path exits 3.
const statScript = `[ -e "$1" ] || [ -L "$1" ] || exit 3; stat -c '%s %f' "$1" || exit 4; [ ! -L "$1" ] || readlink -f "$1" || echo`

// StatPath describes a path in the container with the image's stat.
func (b *Backend) StatPath(ctx context.Context, containerID, p string) (backend.PathStat, error) {
	if !path.IsAbs(p) {
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %q: not an absolute path", p)
	}
	var out, stderr bytes.Buffer
	st, err := b.Exec(ctx, containerID, backend.ExecSpec{
		Cmd:    []string{"/bin/sh", "-c", statScript, "mcp-sandbox-stat", p},
		Stdout: &limited{&out, 8192}, Stderr: &limited{&stderr, 4096},
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
	sizeS, modeS, ok := strings.Cut(first, " ")
	size, err1 := strconv.ParseInt(sizeS, 10, 64)
	raw, err2 := strconv.ParseUint(modeS, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return backend.PathStat{}, fmt.Errorf("kubernetes: stat %s: unreadable answer %q", p, first)
	}
	ps := backend.PathStat{Name: path.Base(p), Size: size, Mode: fileMode(uint32(raw))}
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
