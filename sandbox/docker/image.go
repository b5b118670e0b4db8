package docker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// EnsureImage makes the image present according to policy: "never" only
// checks, "missing" pulls when absent, "always" pulls every time.
func (b *Backend) EnsureImage(ctx context.Context, ref, policy string, progress func(backend.PullProgress)) (backend.ImageInfo, error) {
	info, err := b.inspectImage(ctx, ref)
	present := err == nil
	if err != nil && !errors.Is(err, backend.ErrImageNotFound) {
		return info, err
	}
	switch {
	case policy == "never" && !present:
		return info, fmt.Errorf("%w: image %s is not present and images.pull is \"never\": pull it yourself (docker pull %s) or set images.pull = \"missing\"",
			backend.ErrImageNotFound, ref, ref)
	case policy == "always" || !present:
		if err := b.pull(ctx, ref, progress); err != nil {
			return info, err
		}
		info, err = b.inspectImage(ctx, ref)
		if err != nil {
			return info, err
		}
		info.Pulled = true
	}
	return info, nil
}

func (b *Backend) inspectImage(ctx context.Context, ref string) (backend.ImageInfo, error) {
	ins, err := b.cli.ImageInspect(ctx, ref)
	if cerrdefs.IsNotFound(err) {
		return backend.ImageInfo{}, fmt.Errorf("%w: %s", backend.ErrImageNotFound, ref)
	}
	if err != nil {
		return backend.ImageInfo{}, b.wrap("inspect image", err)
	}
	info := backend.ImageInfo{ID: ins.ID}
	if ins.Config != nil {
		info.User = ins.Config.User
	}
	return info, nil
}

// pullMessage is one line of the engine's pull progress stream.
type pullMessage struct {
	Status         string `json:"status"`
	ID             string `json:"id"`
	Error          string `json:"error"`
	ProgressDetail struct {
		Current int64 `json:"current"`
		Total   int64 `json:"total"`
	} `json:"progressDetail"`
}

func (b *Backend) pull(ctx context.Context, ref string, progress func(backend.PullProgress)) error {
	rc, err := b.cli.ImagePull(ctx, ref, image.PullOptions{})
	if err != nil {
		return b.pullError(ref, err)
	}
	defer rc.Close()
	dec := json.NewDecoder(rc)
	// Sum the layers' progress so a caller sees one number grow.
	layers := map[string][2]int64{}
	for {
		var m pullMessage
		if err := dec.Decode(&m); err == io.EOF {
			return nil
		} else if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return b.pullError(ref, err)
		}
		if m.Error != "" {
			return b.pullError(ref, errors.New(m.Error))
		}
		if progress == nil {
			continue
		}
		if m.ID != "" && m.ProgressDetail.Total > 0 {
			layers[m.ID] = [2]int64{m.ProgressDetail.Current, m.ProgressDetail.Total}
		}
		var cur, total int64
		for _, l := range layers {
			cur += l[0]
			total += l[1]
		}
		status := m.Status
		if m.ID != "" {
			status = m.ID + ": " + m.Status
		}
		progress(backend.PullProgress{Status: status, Current: cur, Total: total})
	}
}

func (b *Backend) pullError(ref string, err error) error {
	// The engine itself did not answer (a registry that did not is the
	// engine's error, reported below).
	if isUnreachable(err) && !cerrdefs.IsNotFound(err) && !isRegistryError(err) {
		return b.wrap("pull "+ref, err)
	}
	if cerrdefs.IsNotFound(err) || isManifestUnknown(err) {
		return fmt.Errorf("%w: the registry does not know image %s (%v): check its name and tag", backend.ErrImageNotFound, ref, err)
	}
	return fmt.Errorf("%w: could not pull %s: %v — check the registry is reachable from the Docker engine, or pull the image yourself", backend.ErrPull, ref, err)
}

func isRegistryError(err error) bool {
	s := err.Error()
	return strings.Contains(s, "registry") || strings.Contains(s, "manifest") || strings.Contains(s, "/v2/")
}

func isManifestUnknown(err error) bool {
	s := strings.ToLower(err.Error())
	return strings.Contains(s, "manifest unknown") || strings.Contains(s, "not found") || strings.Contains(s, "repository does not exist")
}
