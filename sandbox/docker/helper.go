package docker

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/pkg/stdcopy"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// StatPath describes a path in the container without following a final
// symlink (the engine's archive stat).
func (b *Backend) StatPath(ctx context.Context, containerID, p string) (sandbox.PathStat, error) {
	st, err := b.cli.ContainerStatPath(ctx, containerID, p)
	if cerrdefs.IsNotFound(err) {
		return sandbox.PathStat{}, fmt.Errorf("%s: %w", p, fs.ErrNotExist)
	}
	if err != nil {
		return sandbox.PathStat{}, b.wrap("stat "+p, err)
	}
	return sandbox.PathStat{Name: st.Name, Size: st.Size, Mode: st.Mode, LinkTarget: st.LinkTarget}, nil
}

// workspaceVolume returns the name of the volume mounted at /workspace.
func (b *Backend) workspaceVolume(ctx context.Context, containerID string) (string, error) {
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	if err != nil {
		return "", b.wrap("inspect container", err)
	}
	for _, m := range ins.Mounts {
		if m.Destination == sandbox.Workspace && m.Name != "" {
			return m.Name, nil
		}
	}
	return "", errors.New("the sandbox has no workspace volume")
}

// RunHelper runs spec in a helper container from the same hardening as a
// sandbox, except that it may have the network, sharing the sandbox's
// workspace volume. The helper is removed when it exits or ctx ends.
func (b *Backend) RunHelper(ctx context.Context, containerID string, spec sandbox.HelperSpec) (status sandbox.ExecStatus, err error) {
	if len(spec.Cmd) == 0 {
		return status, errors.New("helper: empty command")
	}
	vol, err := b.workspaceVolume(ctx, containerID)
	if err != nil {
		return status, err
	}
	cs := sandbox.ContainerSpec{
		Image: spec.Image, Labels: spec.Labels, Env: spec.Env, User: spec.User, Network: spec.Network,
		MemoryBytes: spec.MemoryBytes, NanoCPUs: spec.NanoCPUs, Pids: spec.Pids, TmpMB: 256,
	}
	cc := &createConfig{
		Config: &container.Config{
			Image: spec.Image, Entrypoint: spec.Cmd[:1], Cmd: spec.Cmd[1:], Env: spec.Env, Labels: spec.Labels,
			AttachStdout: true, AttachStderr: true,
		},
		Host: &container.HostConfig{},
	}
	for _, opt := range defaultOptions(vol) {
		opt(cc, cs)
	}
	cc.Host.LogConfig = container.LogConfig{Type: "json-file"} // attach needs a log driver
	name := path.Base(vol) + "-helper-" + randomSuffix()
	resp, err := b.cli.ContainerCreate(ctx, cc.Config, cc.Host, nil, nil, name)
	if err != nil {
		return status, b.wrap("create helper container", err)
	}
	id := resp.ID
	defer func() {
		cctx, cancel := cleanupContext(ctx)
		defer cancel()
		_ = b.cli.ContainerRemove(cctx, id, container.RemoveOptions{Force: true})
	}()
	hj, err := b.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdout: true, Stderr: true})
	if err != nil {
		return status, b.wrap("attach helper", err)
	}
	defer hj.Close()
	copied := make(chan error, 1)
	go func() {
		_, err := stdcopy.StdCopy(orDiscard(spec.Stdout), orDiscard(spec.Stderr), hj.Reader)
		copied <- err
	}()
	waitC, errC := b.cli.ContainerWait(ctx, id, container.WaitConditionNextExit)
	if err := b.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return status, b.wrap("start helper", err)
	}
	select {
	case w := <-waitC:
		status.ExitCode = int(w.StatusCode)
		<-copied
		return status, nil
	case err := <-errC:
		if ctx.Err() != nil {
			status.Killed = true
			return status, ctx.Err()
		}
		return status, b.wrap("wait for helper", err)
	case <-ctx.Done():
		status.Killed = true
		return status, ctx.Err()
	}
}
