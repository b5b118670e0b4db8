package backend

import (
	"context"
	"io"
)

// Unavailable is a backend that carries out nothing: every call that
// would act fails with Err. A server that could not reach what it was
// told to use (a cluster that did not answer at start) serves on it, so
// that its client gets that cause in each tool call rather than a closed
// pipe, and never another engine in its place. It lists nothing, so the
// server's clean-up at exit has nothing to do.
type Unavailable struct{ Err error }

// Create fails with u.Err.
func (u Unavailable) Create(context.Context, ContainerSpec) (string, error) { return "", u.Err }

// Exec fails with u.Err.
func (u Unavailable) Exec(context.Context, string, ExecSpec) (ExecStatus, error) {
	return ExecStatus{}, u.Err
}

// Remove fails with u.Err.
func (u Unavailable) Remove(context.Context, string) error { return u.Err }

// Rename fails with u.Err.
func (u Unavailable) Rename(context.Context, string, string) error { return u.Err }

// List lists nothing: nothing was made through this backend.
func (u Unavailable) List(context.Context) ([]ContainerInfo, error) { return nil, nil }

// Usage fails with u.Err.
func (u Unavailable) Usage(context.Context, string) (Usage, error) { return Usage{}, u.Err }

// EnsureImage fails with u.Err.
func (u Unavailable) EnsureImage(context.Context, string, string, func(PullProgress)) (ImageInfo, error) {
	return ImageInfo{}, u.Err
}

// CopyTo fails with u.Err.
func (u Unavailable) CopyTo(context.Context, string, string, io.Reader) error { return u.Err }

// CopyFrom fails with u.Err.
func (u Unavailable) CopyFrom(context.Context, string, string) (io.ReadCloser, error) {
	return nil, u.Err
}

// RemoveOrphanVolumes removes nothing: nothing was made through this
// backend.
func (u Unavailable) RemoveOrphanVolumes(context.Context, func(VolumeInfo) bool) ([]string, error) {
	return nil, nil
}

// StatPath fails with u.Err.
func (u Unavailable) StatPath(context.Context, string, string) (PathStat, error) {
	return PathStat{}, u.Err
}

// RunHelper fails with u.Err.
func (u Unavailable) RunHelper(context.Context, string, HelperSpec) (ExecStatus, error) {
	return ExecStatus{}, u.Err
}

// WaitExit reports the container gone.
func (u Unavailable) WaitExit(context.Context, string) (ContainerExit, error) {
	return ContainerExit{Removed: true}, nil
}
