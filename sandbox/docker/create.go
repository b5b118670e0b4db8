package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
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

// Create makes the workspace volume and the hardened container, and starts
// it. On any failure it removes what it made. The engine calls are not
// cancelled half-way (a create cancelled in flight can still make the
// container without telling us its id); a cancelled ctx is honoured between
// them, and what was made is removed.
func (b *Backend) Create(ctx context.Context, spec sandbox.ContainerSpec) (id string, err error) {
	caller := ctx
	ctx, cancel := cleanupContext(ctx)
	defer cancel()
	vol := volumeName(spec.Name)
	uid, gid := splitUser(spec.User)
	mb := spec.WorkspaceMB
	if mb <= 0 {
		mb = 512
	}
	_, err = b.cli.VolumeCreate(ctx, volume.CreateOptions{
		Name: vol, Driver: "local", DriverOpts: tmpfsVolume(mb, uid, gid, "0755"), Labels: spec.Labels,
	})
	if err != nil {
		return "", b.wrap("create workspace volume", err)
	}
	cache := ""
	defer func() {
		if err == nil && caller.Err() != nil {
			err = caller.Err()
		}
		if err != nil {
			cctx, cancel := cleanupContext(ctx)
			defer cancel()
			if id != "" {
				_ = b.cli.ContainerRemove(cctx, id, container.RemoveOptions{Force: true})
			}
			_ = b.removeVolume(cctx, vol)
			if cache != "" {
				_ = b.removeVolume(cctx, cache)
			}
			id = ""
		}
	}()
	if spec.CacheUser != "" {
		cuid, cgid := splitUser(spec.CacheUser)
		_, err = b.cli.VolumeCreate(ctx, volume.CreateOptions{
			Name: cacheVolumeName(spec.Name), Driver: "local", DriverOpts: tmpfsVolume(mb, cuid, cgid, "0700,noexec"), Labels: spec.Labels,
		})
		if err != nil {
			return "", b.wrap("create install cache volume", err)
		}
		cache = cacheVolumeName(spec.Name)
	}

	cc := &createConfig{
		Config: &container.Config{
			Image:      spec.Image,
			Entrypoint: keepAlive[:1],
			Cmd:        keepAlive[1:],
			Env:        spec.Env,
			Labels:     spec.Labels,
			StopSignal: "SIGKILL",
		},
		Host: &container.HostConfig{},
	}
	for _, opt := range defaultOptions(vol) {
		opt(cc, spec)
	}
	if cache != "" {
		cc.Host.Mounts = append(cc.Host.Mounts, mount.Mount{
			Type: mount.TypeVolume, Source: cache, Target: sandbox.InstallCacheMount, ReadOnly: true,
			VolumeOptions: &mount.VolumeOptions{NoCopy: true},
		})
	}
	if err := caller.Err(); err != nil {
		return "", err
	}
	resp, err := b.cli.ContainerCreate(ctx, cc.Config, cc.Host, nil, nil, spec.Name)
	if err != nil {
		return "", b.wrap("create container", err)
	}
	id = resp.ID
	if err := caller.Err(); err != nil {
		return id, err
	}
	if err := b.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		return id, b.wrap("start container", err)
	}
	return id, nil
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
