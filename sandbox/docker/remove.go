package docker

import (
	"context"
	"errors"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Remove removes a container (killing it), the helpers working for it,
// and its own volumes (its workspace and install cache). The engine does
// not remove named volumes with their container, so they are removed by
// name once the container is gone.
func (b *Backend) Remove(ctx context.Context, containerID string) error {
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	switch {
	case cerrdefs.IsNotFound(err):
		return nil
	case err != nil:
		return b.wrap("inspect container", err)
	}
	var errs []error
	if id := ins.Config.Labels[backend.LabelID]; id != "" && ins.Config.Labels[backend.LabelHelper] == "" {
		// A helper holds the sandbox's install cache while it runs.
		errs = append(errs, b.removeHelpers(ctx, id))
	}
	var vols []string
	for _, m := range ins.Mounts {
		if ownVolume(m.Type, m.Name, m.Destination) {
			vols = append(vols, m.Name)
		}
	}
	err = b.cli.ContainerRemove(ctx, containerID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	switch {
	case err == nil, cerrdefs.IsNotFound(err):
	case isRemovalInProgress(err):
		// Another caller is removing it; its volumes are free once it
		// is gone.
		if err := b.waitGone(ctx, containerID); err != nil {
			return errors.Join(append(errs, err)...)
		}
	default:
		return errors.Join(append(errs, b.wrap("remove container", err))...)
	}
	b.mu.Lock()
	delete(b.samples, containerID)
	b.mu.Unlock()
	for _, v := range vols {
		errs = append(errs, b.deleteVolume(ctx, v))
	}
	return errors.Join(errs...)
}

// ownVolume reports whether a container's mount is a volume of its own: a
// named volume at the workspace or the install cache, where only the
// backend mounts its volumes (a helper mounts its sandbox's cache
// elsewhere, and must not remove it).
func ownVolume(typ mount.Type, name, dest string) bool {
	return typ == mount.TypeVolume && name != "" && (dest == backend.Workspace || dest == backend.InstallCacheMount)
}

// removeHelpers removes the helper containers working for sandbox id.
func (b *Backend) removeHelpers(ctx context.Context, id string) error {
	f := filters.NewArgs(filters.Arg("label", backend.LabelHelper+"="+id))
	list, err := b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return b.wrap("list helpers", err)
	}
	var errs []error
	for _, c := range list {
		errs = append(errs, b.Remove(ctx, c.ID))
	}
	return errors.Join(errs...)
}

// waitGone waits until a container no longer exists, for at most
// volumeRetryFor.
func (b *Backend) waitGone(ctx context.Context, containerID string) error {
	deadline := time.Now().Add(volumeRetryFor)
	wait := volumeRetryFirst
	for {
		_, err := b.cli.ContainerInspect(ctx, containerID)
		if cerrdefs.IsNotFound(err) {
			return nil
		}
		if time.Now().After(deadline) {
			return b.wrap("remove container", errors.New("its removal is still in progress"))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return b.wrap("remove container", ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, volumeRetryMax)
	}
}

// RemoveOrphanVolumes removes the sandbox volumes no container uses for
// which orphan says so. Sandbox volumes are the managed ones, and the ones
// named like a workspace or install cache that carry no labels (a server
// of an older version could leave such a volume behind).
func (b *Backend) RemoveOrphanVolumes(ctx context.Context, orphan func(backend.VolumeInfo) bool) ([]string, error) {
	f := filters.NewArgs(filters.Arg("dangling", "true"))
	list, err := b.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return nil, b.wrap("list volumes", err)
	}
	var removed []string
	var errs []error
	for _, v := range list.Volumes {
		if v == nil || !sandboxVolume(v.Name, v.Labels) {
			continue
		}
		created, _ := time.Parse(time.RFC3339Nano, v.CreatedAt)
		if !orphan(backend.VolumeInfo{Name: v.Name, Labels: v.Labels, Created: created}) {
			continue
		}
		// Not forced, so a volume a container took meanwhile stays.
		err := b.cli.VolumeRemove(ctx, v.Name, false)
		switch {
		case err == nil:
			removed = append(removed, v.Name)
		case cerrdefs.IsNotFound(err), cerrdefs.IsConflict(err):
		default:
			errs = append(errs, b.wrap("remove volume", err))
		}
	}
	return removed, errors.Join(errs...)
}

// sandboxVolume reports whether a volume is one the backend makes.
func sandboxVolume(name string, labels map[string]string) bool {
	if labels[backend.LabelManaged] == "true" {
		return true
	}
	return len(labels) == 0 && strings.HasPrefix(name, backend.NamePrefix) &&
		(strings.HasSuffix(name, "-workspace") || strings.HasSuffix(name, "-install-cache"))
}

// isRemovalInProgress reports whether a container removal failed because
// another removal of it is under way.
func isRemovalInProgress(err error) bool {
	return cerrdefs.IsConflict(err)
}
