package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// keepAlive is the container's main process: it does nothing, forever, and
// exits at once on SIGTERM. Work happens in execs.
var keepAlive = []string{"/bin/sh", "-c", "trap 'exit 0' TERM INT HUP; while :; do sleep 3600 & wait $!; done"}

// tmpfsVolume is the local driver's options for a tmpfs-backed volume of
// mb megabytes whose root belongs to uid:gid with mode (and more options
// after a comma).
func tmpfsVolume(mb int, uid, gid, mode string) map[string]string {
	return map[string]string{
		"type": "tmpfs", "device": "tmpfs",
		"o": fmt.Sprintf("size=%dm,uid=%s,gid=%s,mode=%s,nosuid,nodev", mb, uid, gid, mode),
	}
}

// volumeName is the name of a container's workspace volume.
func volumeName(containerName string) string { return containerName + "-workspace" }

// Create makes the hardened container with its volumes, checks that its
// workspace is the capped tmpfs, and starts it. On any failure it removes
// what it made. The engine calls are not cancelled half-way (a create
// cancelled in flight can still make the container without telling us its
// id); a cancelled ctx is honoured between them, and what was made is
// removed.
//
// The volumes are made by the container create itself (volume mounts that
// carry the driver's options and labels), so no volume of ours is ever
// unused while a server means to attach it: another server's orphan sweep
// cannot take it away in between and leave the engine to make a plain
// volume on the host's disk in its place.
func (b *Backend) Create(ctx context.Context, spec backend.ContainerSpec) (id string, err error) {
	h, err := backend.HardeningFor(spec)
	if err != nil {
		return "", fmt.Errorf("docker: %w", err)
	}
	caller := ctx
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	spec.WorkspaceMB, spec.User = h.WorkspaceMB, h.User()
	vols := sandboxVolumes(spec, time.Now())
	defer func() {
		if err == nil && caller.Err() != nil {
			err = caller.Err()
		}
		if err != nil {
			cctx, cancel := cleanupContext(ctx)
			defer cancel()
			b.discard(cctx, id, vols)
			id = ""
		}
	}()
	cc := newCreateConfig(spec.Image, spec.Env, spec.Labels, h, vols[0])
	for _, v := range vols[1:] {
		cc.Host.Mounts = append(cc.Host.Mounts, v.mount())
	}
	if err := caller.Err(); err != nil {
		return "", err
	}
	// Nothing is made when the engine cannot say which it is.
	vols, err = b.adaptCreate(ctx, cc, vols)
	if err != nil {
		return "", err
	}
	resp, err := b.cli.ContainerCreate(ctx, cc.Config, cc.Host, nil, nil, spec.Name)
	if err != nil {
		return "", b.wrap("create container", err)
	}
	id = resp.ID
	if err := b.checkVolumes(ctx, vols); err != nil {
		return id, err
	}
	if err := caller.Err(); err != nil {
		return id, err
	}
	if err := b.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return id, b.wrap("start container", err)
	}
	return id, nil
}

// newCreateConfig is a container of image, idling in keepAlive, hardened
// as h says, with its workspace volume ws.
func newCreateConfig(image string, env []string, labels map[string]string, h backend.Hardening, ws Volume) *createConfig {
	cc := &createConfig{
		Config: &container.Config{
			Image: image, Entrypoint: keepAlive[:1], Cmd: keepAlive[1:], Env: env, Labels: labels,
			StopSignal: "SIGKILL", Hostname: "sandbox",
		},
		Host: &container.HostConfig{},
	}
	render(cc, h)
	mountWorkspace(cc, ws)
	return cc
}

// sandboxVolumes are the volumes of a sandbox: its workspace first, then
// its install cache when spec asks for one.
func sandboxVolumes(spec backend.ContainerSpec, now time.Time) []Volume {
	uid, gid := splitUser(spec.User)
	labels := volumeLabels(spec.Labels, now)
	vols := []Volume{{
		Name: volumeName(spec.Name), Target: backend.Workspace, Labels: labels,
		DriverOpts: tmpfsVolume(spec.WorkspaceMB, uid, gid, "0755"),
	}}
	if spec.CacheUser != "" {
		cuid, cgid := splitUser(spec.CacheUser)
		vols = append(vols, Volume{
			Name: cacheVolumeName(spec.Name), Target: backend.InstallCacheMount, ReadOnly: true, Labels: labels,
			DriverOpts: tmpfsVolume(spec.WorkspaceMB, cuid, cgid, "0700,noexec"),
		})
	}
	return vols
}

// discard removes a container made by Create or RunHelper, and the
// volumes made for it.
func (b *Backend) discard(ctx context.Context, id string, vols []Volume) {
	if id != "" {
		if err := b.cli.ContainerRemove(ctx, id, container.RemoveOptions{Force: true}); err != nil && !cerrdefs.IsNotFound(err) {
			b.log.Warn("remove container", "container", id, "err", err)
		}
	}
	for _, v := range vols {
		if err := b.removeOwnVolume(ctx, v); err != nil {
			b.log.Warn("remove volume", "volume", v.Name, "err", err)
		}
	}
}

// Rename gives a container a new name.
func (b *Backend) Rename(ctx context.Context, containerID, name string) error {
	return b.wrap("rename container", b.cli.ContainerRename(ctx, containerID, name))
}

// randomSuffix returns 8 random hex digits for helper names.
func randomSuffix() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
