package docker

import (
	"context"
	"errors"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// Remove removes a container (killing it) and its workspace volume.
func (b *Backend) Remove(ctx context.Context, containerID string) error {
	var vols []string
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	switch {
	case cerrdefs.IsNotFound(err):
		return nil
	case err != nil:
		return b.wrap("inspect container", err)
	}
	for _, m := range ins.Mounts {
		if m.Type == mount.TypeVolume && m.Name != "" {
			vols = append(vols, m.Name)
		}
	}
	err = b.cli.ContainerRemove(ctx, containerID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	if err != nil && !cerrdefs.IsNotFound(err) && !isRemovalInProgress(err) {
		return b.wrap("remove container", err)
	}
	b.mu.Lock()
	delete(b.samples, containerID)
	b.mu.Unlock()
	var errs []error
	for _, v := range vols {
		if err := b.removeVolume(ctx, v); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

func (b *Backend) removeVolume(ctx context.Context, name string) error {
	// Only our own volumes: a policy that mounted something else must not
	// lose it.
	v, err := b.cli.VolumeInspect(ctx, name)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return b.wrap("inspect volume", err)
	}
	if v.Labels[sandbox.LabelManaged] != "true" {
		return nil
	}
	// A container removed a moment ago can hold its volume a little longer.
	for i := 0; ; i++ {
		err := b.cli.VolumeRemove(ctx, name, true)
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		if !cerrdefs.IsConflict(err) || i >= 20 || ctx.Err() != nil {
			return b.wrap("remove volume", err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// RemoveOrphanVolumes removes managed workspace volumes no container uses.
func (b *Backend) RemoveOrphanVolumes(ctx context.Context) error {
	f := filters.NewArgs(filters.Arg("label", sandbox.LabelManaged+"=true"), filters.Arg("dangling", "true"))
	list, err := b.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return b.wrap("list volumes", err)
	}
	var errs []error
	for _, v := range list.Volumes {
		if err := b.cli.VolumeRemove(ctx, v.Name, false); err != nil && !cerrdefs.IsNotFound(err) && !cerrdefs.IsConflict(err) {
			errs = append(errs, b.wrap("remove volume", err))
		}
	}
	return errors.Join(errs...)
}

func isRemovalInProgress(err error) bool {
	return cerrdefs.IsConflict(err)
}
