package backendrpc

import (
	"bytes"
	"context"
	"fmt"
	"io"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

var (
	_ backend.Backend   = (*Client)(nil)
	_ backend.Inspector = (*Client)(nil)
)

// List lists the backend's containers.
func (c *Client) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	var out []backend.ContainerInfo
	err := c.call(ctx, mList, nil, &out)
	return out, err
}

// Inspect describes one container.
func (c *Client) Inspect(ctx context.Context, id string) (backend.ContainerInfo, error) {
	var out backend.ContainerInfo
	err := c.call(ctx, mInspect, target{ID: id}, &out)
	return out, err
}

// Usage samples a container's resource use.
func (c *Client) Usage(ctx context.Context, id string) (backend.Usage, error) {
	var out backend.Usage
	err := c.call(ctx, mUsage, target{ID: id}, &out)
	return out, err
}

// Remove removes a container.
func (c *Client) Remove(ctx context.Context, id string) error {
	return c.call(ctx, mRemove, target{ID: id}, nil)
}

// EnsureImage makes sure image is there by policy; progress is not
// reported.
func (c *Client) EnsureImage(ctx context.Context, image, policy string, _ func(backend.PullProgress)) (backend.ImageInfo, error) {
	var out backend.ImageInfo
	err := c.call(ctx, mEnsureImage, target{Image: image, Policy: policy}, &out)
	return out, err
}

// StatPath describes a path in a container.
func (c *Client) StatPath(ctx context.Context, id, path string) (backend.PathStat, error) {
	var out backend.PathStat
	err := c.call(ctx, mStatPath, target{ID: id, Path: path}, &out)
	return out, err
}

// CopyFrom returns a tar of path in a container, read whole first.
func (c *Client) CopyFrom(ctx context.Context, id, path string) (io.ReadCloser, error) {
	var out []byte
	if err := c.call(ctx, mCopyOut, target{ID: id, Path: path}, &out); err != nil {
		return nil, err
	}
	return io.NopCloser(bytes.NewReader(out)), nil
}

// Exec runs a command; its stdin is read whole first, and its output is
// written once it has ended.
func (c *Client) Exec(ctx context.Context, id string, spec backend.ExecSpec) (backend.ExecStatus, error) {
	x := execCall{ID: id, Cmd: spec.Cmd, Env: spec.Env, WorkDir: spec.WorkDir, User: spec.User}
	if spec.Stdin != nil {
		b, err := readMax(spec.Stdin)
		if err != nil {
			return backend.ExecStatus{}, err
		}
		x.Stdin, x.HasIn = b, true
	}
	var out execResult
	if err := c.call(ctx, mExec, x, &out); err != nil {
		return backend.ExecStatus{}, err
	}
	for _, o := range []struct {
		w io.Writer
		b []byte
	}{{spec.Stdout, out.Stdout}, {spec.Stderr, out.Stderr}} {
		if o.w != nil && len(o.b) > 0 {
			if _, err := o.w.Write(o.b); err != nil {
				return out.Status, fmt.Errorf("exec output: %w", err)
			}
		}
	}
	return out.Status, nil
}

// Create is not done through the child.
func (c *Client) Create(context.Context, backend.ContainerSpec) (string, error) {
	return "", errUnsupported("starting a sandbox")
}

// Rename is not done through the child.
func (c *Client) Rename(context.Context, string, string) error {
	return errUnsupported("renaming a sandbox")
}

// CopyTo is not done through the child.
func (c *Client) CopyTo(context.Context, string, string, io.Reader) error {
	return errUnsupported("copying files into a sandbox")
}

// RemoveOrphanVolumes is not done through the child.
func (c *Client) RemoveOrphanVolumes(context.Context, func(backend.VolumeInfo) bool) ([]string, error) {
	return nil, errUnsupported("removing volumes")
}

// RunHelper is not done through the child.
func (c *Client) RunHelper(context.Context, string, backend.HelperSpec) (backend.ExecStatus, error) {
	return backend.ExecStatus{}, errUnsupported("running a helper")
}

// WaitExit is not done through the child.
func (c *Client) WaitExit(context.Context, string) (backend.ContainerExit, error) {
	return backend.ContainerExit{}, errUnsupported("waiting for a sandbox to end")
}
