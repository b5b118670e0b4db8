package sandbox

import (
	"context"
	"errors"
	"io/fs"
	"path"
)

// The server runs a few processes of its own inside a sandbox (the file
// tools' tar, the removal of an earlier install, the OOM probe). What the
// sandbox says must not steer them: sandbox_create's env is given only to
// the sandbox's own processes (it is not in the container's environment),
// and these run with serverEnv, which also overrides what an image may
// set, and by absolute path, never through a PATH lookup.

// serverEnv is the environment of the server's own processes in a
// sandbox. Docker adds an exec's variables to the image's, so every
// variable known to change how tar, rm or a shell behave is set here,
// empty where empty means "off".
var serverEnv = []string{
	"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	"HOME=/tmp",
	"TMPDIR=/tmp",
	"LC_ALL=C",
	"LANG=C",
	"TAR_OPTIONS=",
	"POSIXLY_CORRECT=",
	"TZ=UTC",
	"ENV=",
	"BASH_ENV=",
	"CDPATH=",
	"IFS= \t\n",
	"LD_PRELOAD=",
	"LD_LIBRARY_PATH=",
	"LD_AUDIT=",
	"GCONV_PATH=",
	"LOCPATH=",
	"NLSPATH=",
}

// toolDirs are where the server looks for the tools it runs in a sandbox:
// the image's own, on its (read-only) root file system.
var toolDirs = []string{"/usr/bin", "/bin", "/usr/sbin", "/sbin"}

// errNoTool says the image lacks a tool the server needs.
var errNoTool = errors.New("not in the image")

// toolPath returns the absolute path of the image's name tool (tar, rm),
// found once per sandbox through the engine (not a PATH lookup in the
// sandbox) and remembered.
func (e *Engine) toolPath(ctx context.Context, sb *Sandbox, name string) (string, error) {
	sb.mu.Lock()
	p, ok := sb.tools[name]
	sb.mu.Unlock()
	if ok {
		if p == "" {
			return "", errNoTool
		}
		return p, nil
	}
	found := ""
	for _, dir := range toolDirs {
		st, err := e.be.StatPath(ctx, sb.ContainerID, path.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", e.containerGone(ctx, sb, err)
		}
		if st.Mode.IsRegular() || st.Mode&fs.ModeSymlink != 0 {
			found = path.Join(dir, name)
			break
		}
	}
	sb.mu.Lock()
	if sb.tools == nil {
		sb.tools = map[string]string{}
	}
	sb.tools[name] = found
	sb.mu.Unlock()
	if found == "" {
		return "", errNoTool
	}
	return found, nil
}
