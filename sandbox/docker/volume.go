package docker

import (
	"context"
	"fmt"
	"maps"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/mount"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// Volume is a tmpfs-backed named volume that the engine makes in the same
// call as the container that mounts it (the mount carries the driver's
// options and the labels), so it is never unused before its container
// holds it.
type Volume struct {
	Name     string
	Target   string
	ReadOnly bool
	// DriverOpts are the local driver's options (tmpfsVolume).
	DriverOpts map[string]string
	// Labels include backend.LabelCreatedAt, which tells this volume from
	// one of the same name that existed before.
	Labels map[string]string
}

// mount is v as a container mount. No copy-up: otherwise the engine
// copies the image's /workspace (created as root for WorkingDir) into the
// empty volume, owner included, and the sandbox user loses its workspace.
func (v Volume) mount() mount.Mount {
	return mount.Mount{
		Type: mount.TypeVolume, Source: v.Name, Target: v.Target, ReadOnly: v.ReadOnly,
		VolumeOptions: &mount.VolumeOptions{
			NoCopy:       true,
			Labels:       v.Labels,
			DriverConfig: &mount.Driver{Name: "local", Options: v.DriverOpts},
		},
	}
}

// volumeLabels are the labels of the volumes of a container labelled
// labels, made at now.
func volumeLabels(labels map[string]string, now time.Time) map[string]string {
	out := maps.Clone(labels)
	if out == nil {
		out = map[string]string{}
	}
	out[backend.LabelCreatedAt] = now.UTC().Format(time.RFC3339Nano)
	return out
}

// checkVolumes makes sure each volume is the one the container create was
// asked to make: the local driver with exactly our tmpfs options and our
// creation label. An engine that ignores a mount's volume options, or a
// volume of that name that was there before (the engine then uses it as
// it is), would otherwise give the sandbox an uncapped directory on the
// host's disk, owned by root.
func (b *Backend) checkVolumes(ctx context.Context, vols []Volume) error {
	for _, want := range vols {
		got, err := b.cli.VolumeInspect(ctx, want.Name)
		if err != nil {
			return b.wrap("inspect volume "+want.Name, err)
		}
		if got.Driver == "local" && maps.Equal(got.Options, want.DriverOpts) &&
			got.Labels[backend.LabelCreatedAt] == want.Labels[backend.LabelCreatedAt] {
			continue
		}
		what := "workspace volume"
		if want.Target != backend.Workspace {
			what = "volume for " + want.Target
		}
		return fmt.Errorf("%w: the %s %s is not the capped tmpfs it should be (driver %q, options %v, created at %q); "+
			"the engine at %s did not make it from the container's volume options, or a volume of that name already existed "+
			"(`docker volume rm %s` if it is left over); the sandbox was not started",
			backend.ErrWorkspace, what, want.Name, got.Driver, got.Options, got.Labels[backend.LabelCreatedAt], b.Host(), want.Name)
	}
	return nil
}

// removeOwnVolume removes v if it is the volume this backend made (its
// creation label matches), never one of that name that was there before.
func (b *Backend) removeOwnVolume(ctx context.Context, v Volume) error {
	got, err := b.cli.VolumeInspect(ctx, v.Name)
	if cerrdefs.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return b.wrap("inspect volume", err)
	}
	if got.Labels[backend.LabelCreatedAt] != v.Labels[backend.LabelCreatedAt] {
		return nil
	}
	return b.deleteVolume(ctx, v.Name)
}

// Volume removal retries: a volume stays in use for a moment after the
// removal of its container, longer when another caller's removal of that
// container is still in progress.
const (
	volumeRetryFirst = 20 * time.Millisecond
	volumeRetryMax   = 500 * time.Millisecond
	volumeRetryFor   = 10 * time.Second
)

// deleteVolume removes a volume, retrying while it is in use, for at most
// volumeRetryFor. A volume that is gone is not an error.
func (b *Backend) deleteVolume(ctx context.Context, name string) error {
	deadline := time.Now().Add(volumeRetryFor)
	wait := volumeRetryFirst
	for {
		err := b.cli.VolumeRemove(ctx, name, false)
		if err == nil || cerrdefs.IsNotFound(err) {
			return nil
		}
		if !cerrdefs.IsConflict(err) || time.Now().After(deadline) {
			return b.wrap("remove volume "+name, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return b.wrap("remove volume "+name, err)
		case <-t.C:
		}
		wait = min(2*wait, volumeRetryMax)
	}
}
