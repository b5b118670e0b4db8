package docker

import (
	"context"
	"io"

	"github.com/docker/docker/api/types/container"
)

// CopyTo extracts a tar stream into dir inside the container, keeping the
// owners the tar headers name (so files belong to the sandbox user).
// CopyUIDGID stays off: it makes the engine look the container's user up in
// the image's passwd file, which fails for a numeric uid the image does not
// list, while without it the engine keeps the headers' numeric owners.
func (b *Backend) CopyTo(ctx context.Context, containerID, dir string, tar io.Reader) error {
	err := b.cli.CopyToContainer(ctx, containerID, dir, tar, container.CopyToContainerOptions{
		AllowOverwriteDirWithFile: false,
	})
	return b.wrap("copy into sandbox", err)
}

// CopyFrom returns a tar stream of path inside the container.
func (b *Backend) CopyFrom(ctx context.Context, containerID, path string) (io.ReadCloser, error) {
	rc, _, err := b.cli.CopyFromContainer(ctx, containerID, path)
	if err != nil {
		return nil, b.wrap("copy from sandbox", err)
	}
	return rc, nil
}
