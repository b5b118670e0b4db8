package docker

import (
	"context"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// List returns every managed container, whichever server made it.
func (b *Backend) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	f := filters.NewArgs(filters.Arg("label", backend.LabelManaged+"=true"))
	list, err := b.cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, b.wrap("list containers", err)
	}
	out := make([]backend.ContainerInfo, 0, len(list))
	for _, c := range list {
		name := ""
		if len(c.Names) > 0 {
			name = strings.TrimPrefix(c.Names[0], "/")
		}
		out = append(out, backend.ContainerInfo{
			ID:      c.ID,
			Name:    name,
			Image:   c.Image,
			State:   c.State,
			Created: time.Unix(c.Created, 0),
			Labels:  c.Labels,
			Network: c.HostConfig.NetworkMode,
		})
	}
	return out, nil
}

// Inspect returns one container's details, including its limits.
func (b *Backend) Inspect(ctx context.Context, containerID string) (backend.ContainerInfo, error) {
	ins, err := b.cli.ContainerInspect(ctx, containerID)
	if err != nil {
		return backend.ContainerInfo{}, b.wrap("inspect container", err)
	}
	created, _ := time.Parse(time.RFC3339Nano, ins.Created)
	info := backend.ContainerInfo{
		ID:      ins.ID,
		Name:    strings.TrimPrefix(ins.Name, "/"),
		Image:   ins.Config.Image,
		Created: created,
		Labels:  ins.Config.Labels,
	}
	if ins.State != nil {
		info.State = ins.State.Status
	}
	if h := ins.HostConfig; h != nil {
		info.MemoryBytes = h.Memory
		info.NanoCPUs = h.NanoCPUs
		if h.PidsLimit != nil {
			info.Pids = *h.PidsLimit
		}
		info.Network = string(h.NetworkMode)
		info.Runtime = h.Runtime
	}
	return info, nil
}
