package sandbox

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

// List describes the sandboxes this engine owns, with the usage the
// background sampler holds (sampleUsage): no stats call per sandbox, except
// for one not sampled yet, which is sampled now (bounded, concurrently).
func (e *Engine) List(ctx context.Context, _ ListRequest) (ListResult, error) {
	boxes := e.sandboxesOf(ctx)
	out := make([]Info, len(boxes))
	var wg sync.WaitGroup
	for i, sb := range boxes {
		out[i] = Info{
			ID: sb.ID, Language: sb.Language, Image: sb.Image, State: "running",
			CreatedAt: sb.CreatedAt, ExpiresAt: sb.ExpiresAt(), Limits: sb.Limits,
			Network: sb.Network, Client: sb.Client, Owner: e.owner, OwnerPID: e.pid,
			Installation: e.installation, Mine: true,
			ContainerID: sb.ContainerID, Name: backend.ContainerName(sb.ID),
		}
		out[i].Exec, out[i].ExecNote = sb.execPath()
		s := sb.sample()
		if s.at.IsZero() {
			e.kickUsage() // the sampler catches up with new sandboxes
		}
		if s.at.IsZero() && s.err == nil {
			wg.Add(1)
			go func() {
				defer wg.Done()
				out[i].setSample(e.sampleOne(ctx, sb, listSampleTimeout))
			}()
			continue
		}
		out[i].setSample(s)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return ListResult{Sandboxes: out}, nil
}

// ListRequest says how Engine.List lists; it has no fields yet, and is
// there so that adding one changes no caller.
type ListRequest struct{}

// ListResult is what Engine.List reports.
type ListResult struct {
	// Sandboxes are the engine's sandboxes, oldest first.
	Sandboxes []Info
}

// setSample fills in usage from a sample; a failed last sample shows as
// state "unknown".
func (in *Info) setSample(s usageSample) {
	in.Usage = s.usage
	in.Usage.SampledAt = s.at
	if s.err != nil || s.at.IsZero() {
		in.State = "unknown"
	}
}

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
		if unclaimedPool(c) && !l.Pool {
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
					if ci.Network == "none" && out[i].Network != NetworkAllowlist {
						out[i].Network = "none"
					}
				}
			}
			if l.Usage && out[i].State == "running" {
				uctx, cancel := context.WithTimeout(ctx, listSampleTimeout)
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

// A scope is one client of a server that serves several (each HTTP
// session): a call acts on the sandboxes its own client made and sees no
// other, exactly as with separate servers. The scope is carried in the
// call's context (WithScope); a sandbox keeps the scope of the call that
// made it. Over stdio the server has one client, scope "". The tray and
// the CLI read the state directory, not an engine, and see all.

type scopeKey struct{}

// WithScope returns ctx for the calls of the client scope.
func WithScope(ctx context.Context, scope string) context.Context {
	return context.WithValue(ctx, scopeKey{}, scope)
}

func scopeOf(ctx context.Context) string {
	s, _ := ctx.Value(scopeKey{}).(string)
	return s
}

// Lookup returns sandbox id if the calling client (ctx's scope) made it;
// another client's sandbox is not found, as one that never existed.
func (e *Engine) Lookup(ctx context.Context, id string) (*Sandbox, error) {
	sb, err := e.Get(id)
	if err != nil {
		return nil, err
	}
	if sb.scope != scopeOf(ctx) {
		return nil, notInSession(id)
	}
	return sb, nil
}

// sandboxesOf returns the sandboxes the calling client made.
func (e *Engine) sandboxesOf(ctx context.Context) []*Sandbox {
	scope := scopeOf(ctx)
	all := e.Sandboxes()
	out := all[:0]
	for _, sb := range all {
		if sb.scope == scope {
			out = append(out, sb)
		}
	}
	return out
}

// Usage sampling. sandbox_list answers from the latest sample the engine
// holds instead of asking Docker for stats per sandbox on every call (a
// stats round trip per sandbox made a list take up to a second under
// load). One goroutine, run by Engine.Run, samples the live sandboxes
// every usageInterval; with none it does no Docker work.
//
// Polling was chosen over Docker's stats stream: a stream makes the
// engine collect a sample every second per container (with gVisor each
// one runs the runtime's binary), while a poll every few seconds costs a
// one-shot stats call per sandbox and nothing between.

const (
	// defaultUsageInterval is how often live sandboxes are sampled.
	defaultUsageInterval = 5 * time.Second
	// usageCallTimeout bounds one sandbox's stats call.
	usageCallTimeout = 10 * time.Second
	// usageParallel bounds the concurrent stats calls of one sampling round.
	usageParallel = 4
	// listSampleTimeout bounds the stats call sandbox_list makes for a
	// sandbox that has not been sampled yet (one created since the last
	// round).
	listSampleTimeout = 5 * time.Second
)

// usageSample is the latest reading of one sandbox's usage.
type usageSample struct {
	usage backend.Usage
	at    time.Time // zero: never sampled
	err   error     // the last attempt failed
}

// sample returns the sandbox's latest usage sample.
func (s *Sandbox) sample() usageSample {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

func (s *Sandbox) setSample(u usageSample) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
}

// sampleUsage keeps every live sandbox's usage sample fresh until ctx ends.
func (e *Engine) sampleUsage(ctx context.Context) {
	t := time.NewTicker(e.usageEvery)
	defer t.Stop()
	for {
		if boxes := e.Sandboxes(); len(boxes) > 0 {
			e.sampleAll(ctx, boxes)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.usageKick:
		}
	}
}

// sampleAll samples boxes, a few at a time.
func (e *Engine) sampleAll(ctx context.Context, boxes []*Sandbox) {
	sem := make(chan struct{}, usageParallel)
	var wg sync.WaitGroup
	for _, sb := range boxes {
		select {
		case <-ctx.Done():
			wg.Wait()
			return
		case sem <- struct{}{}:
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			e.sampleOne(ctx, sb, usageCallTimeout)
		}()
	}
	wg.Wait()
}

// sampleOne takes one sample of sb and keeps it. A failed call keeps the
// previous reading, marked failed (sandbox_list shows the state as
// unknown), unless a concurrent call succeeded meanwhile or the sandbox
// is going anyway. sb.mu is not held across the call: the sample is
// read, replaced and written back, and the last writer wins.
func (e *Engine) sampleOne(ctx context.Context, sb *Sandbox, timeout time.Duration) usageSample {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	u, err := e.be.Usage(cctx, sb.ContainerID)
	if sb.isRemoving() || ctx.Err() != nil { // going, or the caller gave up
		return sb.sample()
	}
	s := sb.sample()
	if err != nil {
		if s.at.After(start) {
			return s // a concurrent call (sampler or list) did better
		}
		e.log.Debug("sample sandbox usage", "id", sb.ID, "err", err)
		s.err = err
	} else {
		s = usageSample{usage: u, at: time.Now()}
	}
	sb.setSample(s)
	return s
}

// kickUsage asks the sampler for a round now, if it is not busy.
func (e *Engine) kickUsage() {
	select {
	case e.usageKick <- struct{}{}:
	default:
	}
}
