package kubernetes

import (
	"context"
	"errors"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// ErrNoHelpers is RunHelper's error: package installs need a helper with
// the network, which a Kubernetes sandbox does not have yet.
var ErrNoHelpers = errors.New("kubernetes: package installs are not available on Kubernetes yet")

// RunHelper is not available on Kubernetes yet; it makes nothing.
func (b *Backend) RunHelper(ctx context.Context, containerID string, spec backend.HelperSpec) (backend.ExecStatus, error) {
	return backend.ExecStatus{}, ErrNoHelpers
}

// RemoveOrphanVolumes has nothing to do: a sandbox's volumes are the
// emptyDirs of its pod, which die with it.
func (b *Backend) RemoveOrphanVolumes(ctx context.Context, orphan func(backend.VolumeInfo) bool) ([]string, error) {
	return nil, nil
}
