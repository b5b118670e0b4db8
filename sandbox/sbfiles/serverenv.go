package sbfiles

import (
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// The server runs a few processes of its own inside a sandbox (the file
// tools' tar, the removal of an earlier install, the OOM probe). What the
// sandbox says must not steer them: sandbox_create's env is given only to
// the sandbox's own processes (it is not in the container's environment),
// and these run with ServerEnv, which also overrides what an image may
// set, and by absolute path, never through a PATH lookup.

// ServerEnv is the environment of the server's own processes in a
// sandbox. Docker adds an exec's variables to the image's, so every
// variable known to change how tar, rm or a shell behave is set here,
// empty where empty means "off".
var ServerEnv = []string{
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

// ErrNoTool says the image lacks a tool the server needs.
var ErrNoTool = errors.New("not in the image")

// FindTool returns the absolute path of the image's name tool in
// container cid ("" when the image has none), looked up through the
// backend, never by a PATH lookup in the sandbox.
func FindTool(ctx context.Context, be backend.Backend, cid, name string) (string, error) {
	for _, dir := range toolDirs {
		st, err := be.StatPath(ctx, cid, path.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if st.Mode.IsRegular() || st.Mode&fs.ModeSymlink != 0 {
			return path.Join(dir, name), nil
		}
	}
	return "", nil
}

// SandboxEnv is the environment of a sandbox's own processes (the
// container's), so that tools write where they can.
var SandboxEnv = []string{
	"HOME=" + backend.Workspace,
	"TMPDIR=/tmp",
	"LANG=C.UTF-8",
	"PYTHONUNBUFFERED=1",
	"PYTHONDONTWRITEBYTECODE=1",
	"PYTHONUSERBASE=" + backend.Workspace + "/.local",
	"PIP_DISABLE_PIP_VERSION_CHECK=1",
	"PIP_NO_CACHE_DIR=1",
	"MPLBACKEND=Agg",
	"MPLCONFIGDIR=/tmp/.matplotlib",
	"npm_config_cache=/tmp/.npm",
	"npm_config_update_notifier=false",
	"NODE_PATH=" + backend.Workspace + "/node_modules",
}
