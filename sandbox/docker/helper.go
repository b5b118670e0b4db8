package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// StatPath describes a path in the container without following a final
// symlink (the engine's archive stat).
func (b *Backend) StatPath(ctx context.Context, containerID, p string) (backend.PathStat, error) {
	st, err := b.cli.ContainerStatPath(ctx, containerID, p)
	if cerrdefs.IsNotFound(err) {
		return backend.PathStat{}, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		return backend.PathStat{}, b.wrap("stat "+p, err)
	}
	return backend.PathStat{Name: st.Name, Size: st.Size, Mode: st.Mode, LinkTarget: st.LinkTarget}, nil
}

// cacheVolumeName is the name of the install cache of the sandbox whose
// container is named containerName.
func cacheVolumeName(containerName string) string {
	return strings.TrimPrefix(containerName, "/") + "-install-cache"
}

// RunHelper runs spec in a helper container with the same hardening as a
// sandbox (its runtime too, see helperRuntime), and with a fresh workspace
// volume of its own, removed with it. The sandbox's workspace is never
// mounted: an installer with the network must not see, and so cannot run,
// what the sandbox's code wrote. The helper idles while the command runs
// as an exec, so that its workspace (a tmpfs, emptied when the container
// stops) can be copied out afterwards.
func (b *Backend) RunHelper(ctx context.Context, containerID string, spec backend.HelperSpec) (status backend.ExecStatus, err error) {
	if len(spec.Cmd) == 0 {
		return status, errors.New("helper: empty command")
	}
	ins, err := b.inspectFor(ctx, containerID)
	if err != nil {
		return status, err
	}
	h, err := backend.HardeningFor(backend.ContainerSpec{
		User: spec.User, Network: spec.Network, MemoryBytes: spec.MemoryBytes, NanoCPUs: spec.NanoCPUs, Pids: spec.Pids,
		WorkspaceMB: spec.WorkspaceMB, TmpMB: 256, Runtime: helperRuntime(spec.Runtime, ins.HostConfig),
	})
	if err != nil {
		return status, fmt.Errorf("docker: helper: %w", err)
	}
	name := "mcp-sandbox-helper-" + randomSuffix()
	// Made the way a sandbox's workspace is: by the container create.
	vol := Volume{
		Name: volumeName(name), Target: backend.Workspace, Labels: volumeLabels(spec.Labels, time.Now()),
		DriverOpts: tmpfsVolume(h.WorkspaceMB, fmt.Sprint(h.UID), fmt.Sprint(h.GID), "0755"),
	}
	cc := newCreateConfig(spec.Image, spec.Env, spec.Labels, h, vol)
	cache, err := b.helperCache(ins.Mounts, spec.CacheDir, cc, fmt.Sprintf("size=%dm,uid=%d,gid=%d", h.WorkspaceMB, h.UID, h.GID))
	if err != nil {
		return status, err
	}
	made, err := b.adaptCreate(ctx, cc, []Volume{vol})
	if err != nil {
		return status, err
	}
	resp, err := b.cli.ContainerCreate(ctx, cc.Config, cc.Host, nil, nil, name)
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		b.discard(cctx, resp.ID, made)
		if cache != "" {
			// The sandbox went while the helper ran: the engine may have
			// made its cache again for the helper, and nobody else
			// would remove it.
			if _, err := b.cli.ContainerInspect(cctx, containerID); cerrdefs.IsNotFound(err) {
				_ = b.deleteVolume(cctx, cache)
			}
		}
	}()
	if err != nil {
		return status, b.wrap("create helper container", err)
	}
	if err := b.checkVolumes(ctx, made); err != nil {
		return status, err
	}
	if err := b.cli.ContainerStart(ctx, resp.ID, container.StartOptions{}); err != nil {
		return status, b.wrap("start helper", err)
	}
	if spec.Started != nil {
		stop, err := spec.Started(ctx, resp.ID)
		if err != nil {
			return status, err
		}
		defer stop()
	}
	status, err = b.Exec(ctx, resp.ID, backend.ExecSpec{
		Cmd: spec.Cmd, Env: spec.Env, User: spec.User, WorkDir: backend.Workspace,
		Stdout: backend.OrDiscard(spec.Stdout), Stderr: backend.OrDiscard(spec.Stderr),
	})
	if err != nil || status.ExitCode != 0 || spec.Collect == "" || spec.Into == nil {
		return status, err
	}
	return status, b.collect(ctx, resp.ID, spec)
}

// collect hands a tar of spec.Collect in helper id's workspace to
// spec.Into (the stream is the helper's and hostile: Into is the fence).
func (b *Backend) collect(ctx context.Context, id string, spec backend.HelperSpec) error {
	rc, _, err := b.cli.CopyFromContainer(ctx, id, path.Join(backend.Workspace, spec.Collect))
	if cerrdefs.IsNotFound(err) {
		return fmt.Errorf("the installer left no %s: %w", spec.Collect, fs.ErrNotExist)
	}
	if err != nil {
		return b.wrap("copy from the helper", err)
	}
	defer rc.Close()
	return spec.Into(rc)
}

// inspectFor inspects the sandbox a helper works for, whose runtime and
// install cache it follows. A helper for no sandbox (doctor's probes)
// follows nothing.
func (b *Backend) inspectFor(ctx context.Context, containerID string) (container.InspectResponse, error) {
	if containerID == "" {
		return container.InspectResponse{ContainerJSONBase: &container.ContainerJSONBase{}}, nil
	}
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	if err != nil {
		return ins, b.wrap("inspect the sandbox", err)
	}
	return ins, nil
}

// helperRuntime is a helper's OCI runtime: the one asked for, but never
// weaker than the sandbox's own (a sandbox made under runsc keeps its
// helpers under runsc whatever the config says now).
func helperRuntime(asked string, sandbox *container.HostConfig) string {
	if sandbox != nil && sandbox.Runtime == "runsc" {
		return "runsc"
	}
	return asked
}

// helperCache mounts the sandbox's install cache in the helper cc at
// cacheDir, found among the sandbox's mounts by where it mounts it (a claimed pool sandbox
// has been renamed since), and returns its volume's name; a sandbox
// without one gets a tmpfs (with the size and owner opts give) for this
// install only, and the name "". No cacheDir, no cache.
func (b *Backend) helperCache(mounts []container.MountPoint, cacheDir string, cc *createConfig, opts string) (string, error) {
	if cacheDir == "" {
		return "", nil
	}
	cache := ""
	for _, m := range mounts {
		if m.Destination == backend.InstallCacheMount && m.Name != "" {
			cache = m.Name
		}
	}
	if cache == "" {
		cc.Host.Tmpfs[cacheDir] = "rw,nosuid,nodev,noexec," + opts + ",mode=0700"
		return "", nil
	}
	cc.Host.Mounts = append(cc.Host.Mounts, mount.Mount{
		Type: mount.TypeVolume, Source: cache, Target: cacheDir,
		VolumeOptions: &mount.VolumeOptions{NoCopy: true},
	})
	return cache, nil
}
