package sandbox

import (
	"context"
	"sort"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// List describes the sandboxes this engine owns, with the usage the
// background sampler holds (sampleUsage): no stats call per sandbox, except
// for one not sampled yet, which is sampled now (bounded, concurrently).
func (e *Engine) List(ctx context.Context, _ ListRequest) (ListResult, error) {
	boxes := e.sandboxesOf(ctx)
	out := make([]inventory.Info, len(boxes))
	var wg sync.WaitGroup
	for i, sb := range boxes {
		out[i] = inventory.Info{
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
				applySample(&out[i], e.sampleOne(ctx, sb, listSampleTimeout))
			}()
			continue
		}
		applySample(&out[i], s)
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
	Sandboxes []inventory.Info
}

// applySample fills in an Info's usage from a sample; a failed last sample shows as
// state "unknown".
func applySample(in *inventory.Info, s usageSample) {
	in.Usage = s.usage
	in.Usage.SampledAt = s.at
	if s.err != nil || s.at.IsZero() {
		in.State = "unknown"
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
