package sandbox

import (
	"context"
	"slices"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/runner"
)

// claim takes a ready sandbox made with the settings of pl, renames it to
// a claimed sandbox's name and returns it, or returns nil when none fits
// (the caller makes a fresh one). A request with its own environment
// variables never matches: see DESIGN note in claimable.
// name is told the claimed name before the rename.
func (p *pool) claim(ctx context.Context, cfg *config.Config, pl plan, req CreateRequest, name func(string)) *Sandbox {
	if !claimable(pl) {
		return nil
	}
	key := p.keyOf(ctx, cfg, pl)
	for ctx.Err() == nil {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return nil
		}
		list := p.ready[pl.Language]
		i := slices.IndexFunc(list, func(pd *pooled) bool { return pd.key == key })
		pooledHere := p.keys[pl.Language] == key
		if pooledHere {
			p.busy[pl.Language] = time.Now()
		}
		if i < 0 {
			// A burst: the pool could have served this one. It grows
			// by one (reconcile bounds it) and refills meanwhile.
			if pooledHere && p.extra[pl.Language] < poolMaxSize {
				p.extra[pl.Language]++
			}
			p.mu.Unlock()
			if pooledHere {
				p.poke()
			}
			return nil
		}
		pd := list[i]
		p.ready[pl.Language] = slices.Delete(slices.Clone(list), i, i+1)
		p.claimed[pl.Language]++
		p.mu.Unlock()
		p.poke()
		name(ContainerName(pd.sb.ID))
		if err := p.e.be.Rename(ctx, pd.sb.ContainerID, ContainerName(pd.sb.ID)); err != nil {
			p.e.log.Warn("warm pool: claim failed; trying another", "id", pd.sb.ID, "err", err)
			p.discard(ctx, pd.sb)
			continue
		}
		sb := pd.sb
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
		pull = "missing" // not a pull per refill; poolMaxAge renews
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
	cid, err := e.be.Create(ctx, e.containerSpec(ctx, cfg, sb, PoolNamePrefix+id, true))
	if err != nil {
		return nil, err
	}
	sb.ContainerID = cid
	if kind := sb.Lang.Runner; runner.Known(kind) {
		e.warmRunner(soft, sb, kind)
	}
	e.warmAgent(soft, sb)
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
	e.watch(ctx, sb)
	sb.scope = scopeOf(ctx)
	e.boxes[sb.ID] = sb
	e.mu.Unlock()
	e.record(sb, true)
	e.log.Info("sandbox created", "id", sb.ID, "language", sb.Language, "image", sb.Image, "client", sb.Client, "from", "warm pool")
	return sb, nil
}

// PoolStats is the warm pool of one language: what it holds, what it aims
// to hold, and how many it made ready and handed out since the start.
type PoolStats struct {
	Ready, Target, Made, Claimed int
}

// PoolStats returns the warm pool's figures for language.
func (e *Engine) PoolStats(language string) PoolStats {
	p := e.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	return PoolStats{Ready: len(p.ready[language]), Target: p.targets[language], Made: p.made[language], Claimed: p.claimed[language]}
}

// PoolReady returns how many warm sandboxes of language are ready to be
// claimed.
func (e *Engine) PoolReady(language string) int {
	e.pool.mu.Lock()
	defer e.pool.mu.Unlock()
	return len(e.pool.ready[language])
}
