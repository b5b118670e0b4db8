package sandboxwatch

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/docker/docker/api/types/events"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"
	"github.com/fsnotify/fsnotify"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// DockerSource is the real Source: the engine's list of managed sandboxes
// (inventory.Lister, which merges the servers' records), its stats, and its
// events stream, plus changes to the record files, which servers rewrite
// when a sandbox is used (its expiry moves).
type DockerSource struct {
	Lister inventory.Lister
	Client *client.Client
	// RecordsDir is <state dir>/sandboxes; "" watches no records.
	RecordsDir string
	// LifecycleOnly follows only the events that add or remove a sandbox
	// (create, start, die, destroy, …), not the exec events every tool
	// call makes: enough for a count, and nothing wakes while sandboxes
	// are merely used.
	LifecycleOnly bool
}

// lifecycleActions are the container events that change the list.
var lifecycleActions = []string{"create", "start", "restart", "stop", "die", "kill", "destroy", "pause", "unpause", "rename", "update", "oom"}

var _ Source = DockerSource{}

// List lists this installation's sandboxes (the Lister's State), without
// usage.
func (d DockerSource) List(ctx context.Context) ([]inventory.Info, error) {
	l := d.Lister
	l.Usage = false
	return l.List(ctx)
}

// Usage samples a container's resource use.
func (d DockerSource) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	return d.Lister.Backend.Usage(ctx, containerID)
}

// Events merges the engine's container events for this installation's
// containers with changes to the record files.
func (d DockerSource) Events(ctx context.Context) (<-chan Event, <-chan error) {
	out := make(chan Event, 16)
	errc := make(chan error, 1)
	f := filters.NewArgs(
		filters.Arg("type", string(events.ContainerEventType)),
		filters.Arg("label", backend.LabelManaged+"=true"),
	)
	// Only this installation's containers can change the list: another
	// user's, or a test's on a shared engine, must not wake the tray and
	// the window (labels filters are ANDed).
	if inst, err := inventory.Installation(d.Lister.State); err == nil && inst != "" {
		f.Add("label", backend.LabelInstallation+"="+inst)
	}
	if d.LifecycleOnly {
		for _, a := range lifecycleActions {
			f.Add("event", a)
		}
	}
	msgs, derrs := d.Client.Events(ctx, events.ListOptions{Filters: f})
	var recs <-chan fsnotify.Event
	var w *fsnotify.Watcher
	if d.RecordsDir != "" {
		if fw, err := fsnotify.NewWatcher(); err == nil {
			if err := fw.Add(d.RecordsDir); err == nil {
				w, recs = fw, fw.Events
			} else {
				fw.Close()
			}
		}
	}
	go func() {
		if w != nil {
			defer w.Close()
		}
		for {
			var ev Event
			select {
			case <-ctx.Done():
				return
			case err := <-derrs:
				if err == nil {
					err = errors.New("docker events stream ended")
				}
				errc <- err
				return
			case m := <-msgs:
				ev = Event{Action: string(m.Action), ContainerID: m.Actor.ID}
			case fe, ok := <-recs:
				if !ok {
					recs = nil
					continue
				}
				if filepath.Ext(fe.Name) != ".json" {
					continue // the atomic writer's temporary files
				}
				ev = Event{Action: "record"}
			}
			select {
			case out <- ev:
			default: // a list is coming anyway
			}
		}
	}()
	return out, errc
}
