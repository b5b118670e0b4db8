package sandbox

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/pool"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// The warm pool (sandbox/pool) holds, per [pool] language, ready hardened
// sandboxes with their resident interpreter started. A pooled sandbox is
// an ordinary Sandbox that is not yet in the engine's map; it moves there
// when claimed. This file is what the pool asks of the engine.

// poolKey is what must match between a pooled sandbox and a request.
type poolKey struct {
	Image   string
	Network string
	Limits  inventory.Limits
	Runtime string
}

// warmPool is the engine's pool of sandboxes.
type warmPool = pool.Pool[*Sandbox, poolKey]

// poolEngine is the engine as the pool sees it.
type poolEngine struct{ e *Engine }

func newPool(e *Engine) *warmPool {
	return pool.New(pool.Options[*Sandbox, poolKey]{Engine: poolEngine{e}, Tick: e.tick, Log: e.log})
}

func (e *Engine) poolKeyOf(ctx context.Context, cfg *config.Config, pl plan) poolKey {
	return poolKey{Image: pl.Image, Network: pl.Network, Limits: pl.Limits, Runtime: e.runtimeFor(ctx, cfg)}
}

// Wanted returns the config's [pool] languages (none while paused).
func (pe poolEngine) Wanted(ctx context.Context) ([]pool.Want[*Sandbox, poolKey], pool.Sizes) {
	e := pe.e
	cfg := e.cfg.Current()
	if e.st != nil && e.st.Paused() {
		return nil, pool.Sizes{}
	}
	var wants []pool.Want[*Sandbox, poolKey]
	seen := map[string]bool{}
	for _, name := range cfg.Pool.Languages {
		pl, err := makePlan(cfg, CreateRequest{Language: name})
		if err != nil || seen[pl.Language] {
			continue // config validation reports unknown languages
		}
		seen[pl.Language] = true
		wants = append(wants, pool.Want[*Sandbox, poolKey]{
			Language: pl.Language, Key: e.poolKeyOf(ctx, cfg, pl),
			Make: func(ctx, soft context.Context) (pool.Box[*Sandbox], error) {
				sb, err := e.createPooled(ctx, soft, pl)
				if err != nil {
					return pool.Box[*Sandbox]{}, err
				}
				return pool.Box[*Sandbox]{Sandbox: sb, ID: sb.ID, ContainerID: sb.ContainerID, Created: sb.CreatedAt}, nil
			},
		})
	}
	return wants, pool.SizesOf(cfg)
}

// Running says which of the ready sandboxes' containers run, from their
// watchers (watchPooled): asking the container engine every pool tick
// kept the idle server's HTTP and JSON code resident, 4 MB of it after
// the idle release (sandbox/memtrim).
func (pe poolEngine) Running(_ context.Context, boxes []*Sandbox) (map[string]bool, error) {
	alive := make(map[string]bool, len(boxes))
	for _, sb := range boxes {
		alive[sb.ContainerID] = sb.pooled == nil || !sb.pooled.stopped.Load()
	}
	return alive, nil
}

// poolWatch watches a ready pooled sandbox's container until it is
// claimed (adopt starts the engine's own watcher, death.go) or removed.
type poolWatch struct {
	stopped atomic.Bool // the container stopped or is gone
	cancel  context.CancelFunc
}

// watchPooled starts sb's pool watcher: one wait on the container engine
// that answers when the container stops, instead of a listing per tick.
func (e *Engine) watchPooled(sb *Sandbox) {
	ctx, cancel := context.WithCancel(context.Background())
	w := &poolWatch{cancel: cancel}
	sb.pooled = w
	go func() {
		if _, ok := e.waitExit(ctx, sb); ok {
			w.stopped.Store(true)
		}
	}()
}

// unwatchPooled stops sb's pool watcher, if it has one.
func (sb *Sandbox) unwatchPooled() {
	if sb.pooled != nil {
		sb.pooled.cancel()
	}
}

// Remove closes sb's interpreters and removes its container.
func (pe poolEngine) Remove(ctx context.Context, sb *Sandbox) {
	sb.unwatchPooled()
	for _, r := range sb.takeRunners() {
		r.close()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := pe.e.be.Remove(rctx, sb.ContainerID); err != nil {
		pe.e.log.Warn("warm pool: remove sandbox", "id", sb.ID, "err", err)
	}
}

// claimPooled takes a ready sandbox made with the settings of pl, renames
// it to a claimed sandbox's name and returns it, or returns nil when none
// fits (the caller makes a fresh one). name is told the claimed name
// before the rename.
func (e *Engine) claimPooled(ctx context.Context, cfg *config.Config, pl plan, req CreateRequest, name func(string)) *Sandbox {
	if !claimable(pl) {
		return nil
	}
	key := e.poolKeyOf(ctx, cfg, pl)
	for ctx.Err() == nil {
		sb, ok := e.pool.Claim(pl.Language, key)
		if !ok {
			return nil
		}
		name(backend.ContainerName(sb.ID))
		if err := e.be.Rename(ctx, sb.ContainerID, backend.ContainerName(sb.ID)); err != nil {
			e.log.Warn("warm pool: claim failed; trying another", "id", sb.ID, "err", err)
			e.pool.Discard(ctx, sb)
			continue
		}
		now := time.Now()
		sb.mu.Lock()
		sb.Client, sb.CreatedAt, sb.lastUsed = req.Client, now, now
		sb.ttl = time.Duration(pl.TTL) * time.Minute
		sb.mu.Unlock()
		return sb
	}
	return nil
}

// claimable reports whether a request may be served from the pool. Its
// image, network and limits must be the pool's (the key checks that), and
// it must not set environment variables: a container's environment is fixed
// at creation, and applying it at exec time instead would leave it out of
// everything that is not an engine exec (a person's `docker exec`, the
// package installer's helper), so a pooled sandbox would behave unlike a
// fresh one. Nor may it name its own allow_domains (a pooled proxy
// serves the config's). Such requests get a fresh sandbox.
func claimable(pl plan) bool { return len(pl.Env) == 0 && len(pl.AllowDomains) == 0 }

// createPooled makes a pooled sandbox: hardened exactly like any other
// (the same containerSpec), labelled and named as the pool's, with its
// resident interpreter started. soft bounds the image check and the
// interpreter's start, ctx the container's creation.
func (e *Engine) createPooled(ctx, soft context.Context, pl plan) (*Sandbox, error) {
	if e.regErr != nil {
		return nil, e.regErr
	}
	cfg := e.cfg.Current()
	pull := cfg.Images.Pull
	if pull == "always" {
		pull = "missing" // not a pull per refill; the pool renews it after 6 hours
	}
	img, err := e.be.EnsureImage(soft, pl.Image, pull, nil)
	if err != nil {
		return nil, err
	}
	id := newID()
	now := time.Now()
	sb := &Sandbox{
		ID: id, Language: pl.Language, Lang: pl.Lang, Image: pl.Image, Network: pl.Network,
		Limits: pl.Limits, User: sandboxUser(img.User), CreatedAt: now,
		ttl: time.Duration(pl.TTL) * e.ttlUnit, lastUsed: now,
	}
	cid, err := e.be.Create(ctx, e.containerSpec(ctx, cfg, sb, backend.PoolNamePrefix+id, true))
	if err != nil {
		return nil, err
	}
	sb.ContainerID = cid
	if kind := sb.Lang.Runner; runner.Known(kind) {
		e.warmRunner(soft, sb, kind)
	}
	e.warmAgent(soft, sb)
	e.watchPooled(sb)
	return sb, nil
}

// takeRunners detaches sb's interpreters, for closing.
func (sb *Sandbox) takeRunners() map[string]residentRunner {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	r := sb.runners
	sb.runners = nil
	return r
}

// adopt makes a claimed pool sandbox one of the engine's.
func (e *Engine) adopt(ctx context.Context, sb *Sandbox) (*Sandbox, error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.removeContainer(context.WithoutCancel(ctx), sb.ContainerID)
		return nil, ErrClosed
	}
	sb.unwatchPooled()
	e.watch(ctx, sb)
	sb.scope = scopeOf(ctx)
	e.boxes[sb.ID] = sb
	e.mu.Unlock()
	e.record(sb, true)
	e.log.Info("sandbox created", "id", sb.ID, "language", sb.Language, "image", sb.Image, "client", sb.Client, "from", "warm pool")
	return sb, nil
}

// PoolStats returns the warm pool's figures for language.
func (e *Engine) PoolStats(language string) pool.Stats { return e.pool.Stats(language) }

// PoolReady returns how many warm sandboxes of language are ready to be
// claimed.
func (e *Engine) PoolReady(language string) int { return e.pool.Stats(language).Ready }
