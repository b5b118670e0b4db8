package inventory

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Info describes a sandbox as sandbox_list, `mcp-sandbox ps` and the tray
// show it.
type Info struct {
	ID        string        `json:"sandbox_id"`
	Language  string        `json:"language"`
	Image     string        `json:"image"`
	State     string        `json:"state"`
	CreatedAt time.Time     `json:"created_at"`
	ExpiresAt time.Time     `json:"expires_at"`
	Limits    Limits        `json:"limits"`
	Usage     backend.Usage `json:"usage"`
	Network   string        `json:"network"`
	Client    string        `json:"client,omitempty"`
	Owner     string        `json:"owner,omitempty"`
	OwnerPID  int           `json:"owner_pid,omitempty"`
	// Installation is the installation id of the server that made it;
	// Mine says it is the caller's (Mine): false marks another user's or
	// another state directory's sandbox in `ps --all`.
	Installation string `json:"installation,omitempty"`
	Mine         bool   `json:"mine"`
	Pool         bool   `json:"pool,omitempty"`
	ContainerID  string `json:"container_id,omitempty"`
	Name         string `json:"name,omitempty"`
	// Exec says how commands run: "agent" (a resident agent starts each
	// one), "docker exec" (one engine exec each; ExecNote says why), or
	// empty before the sandbox's first command.
	Exec     string `json:"exec,omitempty"`
	ExecNote string `json:"exec_note,omitempty"`
	// Exposed holds the previews the sandbox's record lists, by port
	// (Lister, for the window; sandbox_list asks its engine's Exposed).
	// An array, not a slice, so Info stays comparable by value; unused
	// entries are zero. Previews returns the used ones.
	Exposed [preview.Max]preview.Exposure `json:"-"`
	// Traffic is the network summary the sandbox's record holds (Lister,
	// for the window).
	Traffic Traffic `json:"-"`
}

// Previews returns the previews in in.Exposed.
func (in Info) Previews() []preview.Exposure {
	var out []preview.Exposure
	for _, x := range in.Exposed {
		if x.Port != 0 {
			out = append(out, x)
		}
	}
	return out
}

// Limits are a sandbox's resource limits as a client sees them.
type Limits struct {
	MemoryMB           int     `json:"memory_mb"`
	CPUs               float64 `json:"cpus"`
	Pids               int     `json:"pids"`
	WorkspaceMB        int     `json:"workspace_mb"`
	ExecTimeoutSeconds int     `json:"exec_timeout_seconds"`
}

// usageTimeout bounds the stats call for one sandbox's live usage.
const usageTimeout = 5 * time.Second

// Lister describes the managed sandboxes of this installation (State's),
// whichever of its servers made them, for `mcp-sandbox ps` and the tray;
// with All, every one on the engine, each marked as this installation's
// or not (Info.Mine).
type Lister struct {
	Backend backend.Backend
	// State is this installation's state directory: whose sandboxes are
	// listed (Mine), and what changed after creation (claimed, client,
	// expiry) from its servers' records. Without it nothing is this
	// installation's, and only All lists anything.
	State *state.Store
	// All lists other installations' sandboxes too.
	All bool
	// Usage asks for live usage (one stats call per sandbox).
	Usage bool
	// Pool includes warm-pool containers.
	Pool bool
}

// List returns the managed sandboxes, oldest first.
func (l Lister) List(ctx context.Context) ([]Info, error) {
	inst, err := Installation(l.State)
	if err != nil {
		return nil, err
	}
	list, err := l.Backend.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Info, 0, len(list))
	labels := make([]map[string]string, 0, len(list))
	for _, c := range list {
		if c.Labels[backend.LabelHelper] != "" {
			continue // an install helper, not a sandbox
		}
		if UnclaimedPool(c) && !l.Pool {
			// A claimed pool container keeps its pool label (labels are
			// fixed at creation) but has its sandbox name: it is listed.
			continue
		}
		in := infoFromLabels(c)
		in.Mine = Mine(c.Labels, inst)
		if !in.Mine && !l.All {
			continue
		}
		out = append(out, in)
		labels = append(labels, c.Labels)
	}
	var wg sync.WaitGroup
	for i := range out {
		// Records are this installation's: another's sandbox of the
		// same id (they are random) is not described by them.
		if l.State != nil && out[i].Mine {
			if r, err := l.State.ReadRecord(out[i].ID); err == nil && r.ContainerID == out[i].ContainerID {
				out[i].ExpiresAt = r.ExpiresAt
				if r.Client != "" {
					out[i].Client = printable.Clean(r.Client, printable.NameMax)
				}
				if r.Claimed {
					out[i].Pool = false
				}
				out[i].Exposed = preview.FromRecords(r.Exposed)
				out[i].Traffic = trafficFrom(r.Traffic)
			}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Limits labelled at creation need no inspect.
			li, canInspect := l.Backend.(backend.Inspector)
			if !limitsFromLabels(&out[i], labels[i]) && canInspect {
				if ci, err := li.Inspect(ctx, out[i].ContainerID); err == nil {
					out[i].Limits.MemoryMB = int(ci.MemoryBytes >> 20)
					out[i].Limits.CPUs = float64(ci.NanoCPUs) / 1e9
					out[i].Limits.Pids = int(ci.Pids)
					if ci.Network == "none" && out[i].Network != "allowlist" {
						out[i].Network = "none"
					}
				}
			}
			if l.Usage && out[i].State == "running" {
				uctx, cancel := context.WithTimeout(ctx, usageTimeout)
				defer cancel()
				if u, err := l.Backend.Usage(uctx, out[i].ContainerID); err == nil {
					u.SampledAt = time.Now()
					out[i].Usage = u
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, nil
}

// limitsFromLabels sets in's limits from the limit labels, if the
// container has all of them (containers made before they existed do not).
func limitsFromLabels(in *Info, labels map[string]string) bool {
	mem, err1 := strconv.Atoi(labels[backend.LabelMemoryMB])
	cpus, err2 := strconv.ParseFloat(labels[backend.LabelCPUs], 64)
	pids, err3 := strconv.Atoi(labels[backend.LabelPids])
	if err1 != nil || err2 != nil || err3 != nil {
		return false
	}
	in.Limits.MemoryMB, in.Limits.CPUs, in.Limits.Pids = mem, cpus, pids
	return true
}

// infoFromLabels describes a container from what the engine says of it.
// Labels are anyone's to set who can reach the engine (and the client name
// is what an MCP client said): every string is cleaned here, where it
// enters, so no row of `ps` or the tray's window can be forged.
func infoFromLabels(c backend.ContainerInfo) Info {
	clean := func(s string) string { return printable.Clean(s, printable.NameMax) }
	pid, _ := strconv.Atoi(c.Labels[backend.LabelOwnerPID])
	exp, _ := time.Parse(time.RFC3339, c.Labels[backend.LabelExpiresAt])
	ws, _ := strconv.Atoi(c.Labels[backend.LabelWorkspaceMB])
	timeout, _ := strconv.Atoi(c.Labels[backend.LabelExecTimeout])
	id := c.Labels[backend.LabelID]
	if id == "" {
		id = strings.TrimPrefix(strings.TrimPrefix(c.Name, backend.PoolNamePrefix), backend.NamePrefix)
	}
	return Info{
		ID: clean(id), Language: clean(c.Labels[backend.LabelLanguage]), Image: printable.Clean(c.Image, 256), State: clean(c.State),
		CreatedAt: c.Created, ExpiresAt: exp, Client: clean(c.Labels[backend.LabelClient]),
		Owner: clean(c.Labels[backend.LabelOwner]), OwnerPID: pid, Pool: c.Labels[backend.LabelPool] == "true" && strings.HasPrefix(c.Name, backend.PoolNamePrefix),
		Installation: clean(c.Labels[backend.LabelInstallation]),
		Network:      clean(c.Labels[backend.LabelNetwork]), ContainerID: clean(c.ID), Name: printable.Clean(c.Name, 256),
		Limits: Limits{WorkspaceMB: ws, ExecTimeoutSeconds: timeout},
	}
}
