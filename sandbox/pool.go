package sandbox

import (
	"context"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Warm pool limits.
const (
	// poolMaxSize caps [pool] size and max_size per language, whatever
	// the file says.
	poolMaxSize = 16
	// poolMaxAge is when a ready sandbox is replaced by a fresh one (a new
	// image tag, a long-idle interpreter).
	poolMaxAge = 6 * time.Hour
	// poolLabelTTL is the expiry label of a pooled container: the owner
	// replaces it long before, so only a reaper of a server that is gone
	// (on another host) ever acts on it.
	poolLabelTTL = 24 * time.Hour
	// poolMaxFilling bounds pool creations in flight, so refilling (and
	// growing in a burst) never floods the Docker engine.
	poolMaxFilling = 4
	// poolMaxBackoff bounds the wait after failed refills.
	poolMaxBackoff = time.Minute
)

// pool keeps [pool] size ready, hardened, unclaimed sandboxes for each of
// [pool] languages, with their resident interpreter started. Create takes
// one whose settings match the request (claim); the pool refills in the
// background, drains while the service is paused, follows the config as it
// reloads, and removes what it holds on Close.
//
// In a burst (claims that find no ready sandbox) the pool of a language
// grows by one per such claim, up to [pool] max_size and max_sandboxes;
// once it has gone [pool] idle_seconds without a claim or a fill, and
// none is in flight, it shrinks back to [pool] size.
//
// A pooled sandbox is an ordinary Sandbox that is not yet in the engine's
// map; it moves there when claimed, and a claim takes it out of the ready
// list under the pool's lock, so it is never handed out twice.
type pool struct {
	e    *Engine
	kick chan struct{}

	mu      sync.Mutex
	ready   map[string][]*pooled // by language, oldest first
	filling map[string]int
	retry   map[string]poolRetry
	// extra is how far each language's pool has grown above [pool] size;
	// busy is its last claim or fill, from which idle_seconds count.
	extra map[string]int
	busy  map[string]time.Time
	// keys are the settings each language's pool is made with now.
	keys map[string]poolKey
	// made and claimed count pooled sandboxes made ready and claimed.
	made, claimed map[string]int
	// targets are the sizes the last reconcile aimed at.
	targets map[string]int
	closed  bool
	wg      sync.WaitGroup // fills and removals in flight
	// stops cancel the fills in flight (their image pulls and
	// interpreter starts; never a container creation).
	stops    map[int]context.CancelFunc
	nextFill int
}

// pooled is a ready sandbox and the settings it was made with.
type pooled struct {
	sb  *Sandbox
	key poolKey
}

// poolKey is what must match between a pooled sandbox and a request.
type poolKey struct {
	Image   string
	Network string
	Limits  Limits
	Runtime string
}

// poolRetry is the back-off after a failed refill.
type poolRetry struct {
	wait time.Duration
	next time.Time
}

func newPool(e *Engine) *pool {
	return &pool{
		e: e, kick: make(chan struct{}, 1),
		ready: map[string][]*pooled{}, filling: map[string]int{}, retry: map[string]poolRetry{},
		stops: map[int]context.CancelFunc{},
		extra: map[string]int{}, busy: map[string]time.Time{}, keys: map[string]poolKey{},
		made: map[string]int{}, claimed: map[string]int{}, targets: map[string]int{},
	}
}

// poke asks the pool to look at itself soon.
func (p *pool) poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

func (p *pool) keyOf(ctx context.Context, cfg *config.Config, pl plan) poolKey {
	return poolKey{Image: pl.Image, Network: pl.Network, Limits: pl.Limits, Runtime: p.e.runtimeFor(ctx, cfg)}
}

// poolFillTimeout bounds one refill (image check, create, interpreter).
const poolFillTimeout = 2 * time.Minute

// run refills the pool until ctx ends. Engine.Run runs it.
func (p *pool) run(ctx context.Context) {
	t := time.NewTicker(p.e.tick)
	defer t.Stop()
	p.reconcile(ctx, false)
	for {
		select {
		case <-ctx.Done():
			return
		case <-p.kick:
			p.reconcile(ctx, false)
		case <-t.C:
			p.reconcile(ctx, true)
		}
	}
}

// poolWant is one language the pool should hold.
type poolWant struct {
	plan plan
	key  poolKey
}

// poolSizes are the configured bounds of each language's pool.
type poolSizes struct {
	size, most int           // [pool] size; what it may grow to
	idle       time.Duration // [pool] idle_seconds
}

// target is how many ready sandboxes of lang the pool holds now: size,
// plus what a burst added until it went idle. Call with p.mu held.
func (p *pool) target(lang string, sz poolSizes, now time.Time) int {
	if p.extra[lang] > 0 && p.filling[lang] == 0 && now.Sub(p.busy[lang]) > sz.idle {
		p.e.log.Debug("warm pool: idle; shrinking back", "language", lang, "size", sz.size)
		delete(p.extra, lang)
	}
	return min(sz.size+p.extra[lang], sz.most)
}

// wanted returns, in the config's order, the languages the pool should
// hold now (none while paused) and the bounds of each.
func (p *pool) wanted(ctx context.Context) ([]string, map[string]poolWant, poolSizes) {
	cfg := p.e.cfg.Current()
	if p.e.st != nil && p.e.st.Paused() {
		return nil, nil, poolSizes{}
	}
	size := min(max(cfg.Pool.Size, 0), poolMaxSize)
	sz := poolSizes{
		size: size,
		most: min(max(cfg.Pool.MaxSize, size), poolMaxSize, max(cfg.Limits.MaxSandboxes, size)),
		idle: time.Duration(cfg.Pool.IdleSeconds) * time.Second,
	}
	if size == 0 {
		// size 0 turns the pool off: it does not grow in bursts either.
		sz.most = 0
	}
	var order []string
	want := map[string]poolWant{}
	for _, name := range cfg.Pool.Languages {
		pl, err := makePlan(cfg, CreateRequest{Language: name})
		if err != nil {
			continue // config validation reports unknown languages
		}
		if _, dup := want[pl.Language]; !dup {
			order = append(order, pl.Language)
			want[pl.Language] = poolWant{plan: pl, key: p.keyOf(ctx, cfg, pl)}
		}
	}
	return order, want, sz
}

// reconcile drops ready sandboxes that no longer fit (config changed,
// paused, too old, gone from outside) and starts refills. With check it
// also asks the backend which containers still run.
func (p *pool) reconcile(ctx context.Context, check bool) {
	order, want, sz := p.wanted(ctx)
	var alive map[string]bool
	if check && p.count() > 0 {
		if list, err := p.e.be.List(ctx); err == nil {
			alive = map[string]bool{}
			for _, c := range list {
				alive[c.ID] = c.State == "running"
			}
		}
	}
	var drop []*pooled
	p.mu.Lock()
	if p.closed || ctx.Err() != nil {
		p.mu.Unlock()
		return
	}
	now := time.Now()
	clear(p.keys)
	clear(p.targets)
	for lang, w := range want {
		p.keys[lang] = w.key
	}
	for lang := range p.extra {
		if _, ok := want[lang]; !ok {
			delete(p.extra, lang)
		}
	}
	for lang, list := range p.ready {
		w, ok := want[lang]
		size := p.target(lang, sz, now)
		var keep []*pooled
		for _, pd := range list {
			stale := !ok || pd.key != w.key || len(keep) >= size ||
				time.Since(pd.sb.CreatedAt) > poolMaxAge || (alive != nil && !alive[pd.sb.ContainerID])
			if stale {
				drop = append(drop, pd)
				continue
			}
			keep = append(keep, pd)
		}
		p.ready[lang] = keep
	}
	inflight := 0
	for _, n := range p.filling {
		inflight += n
	}
	for _, lang := range order {
		if r := p.retry[lang]; now.Before(r.next) {
			continue
		}
		p.targets[lang] = p.target(lang, sz, now)
		for need := p.targets[lang] - len(p.ready[lang]) - p.filling[lang]; need > 0 && inflight < poolMaxFilling; need-- {
			p.filling[lang]++
			inflight++
			p.wg.Add(1)
			// A fill is not cancelled with ctx: a container creation
			// cancelled half-way can leave a container the engine made
			// but never named to us. close stops the rest of it.
			fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), poolFillTimeout)
			soft, stop := context.WithCancel(fctx)
			p.nextFill++
			n := p.nextFill
			p.stops[n] = stop
			go func() {
				defer p.wg.Done()
				defer cancel()
				p.fill(fctx, soft, lang, want[lang])
				p.mu.Lock()
				delete(p.stops, n)
				p.mu.Unlock()
				stop()
			}()
		}
	}
	p.mu.Unlock()
	for _, pd := range drop {
		p.discard(ctx, pd.sb)
	}
}

func (p *pool) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, l := range p.ready {
		n += len(l)
	}
	return n
}

// fill makes one pooled sandbox for lang and adds it to the ready list.
// soft, which close cancels, bounds the image check and the interpreter's
// start; ctx the rest. When the pool has closed meanwhile, it removes what
// it made.
func (p *pool) fill(ctx, soft context.Context, lang string, w poolWant) {
	sb, err := p.e.createPooled(ctx, soft, w.plan)
	p.mu.Lock()
	p.filling[lang]--
	if err != nil {
		r := p.retry[lang]
		r.wait = min(max(2*r.wait, time.Second), poolMaxBackoff)
		r.next = time.Now().Add(r.wait)
		p.retry[lang] = r
		closed := p.closed
		p.mu.Unlock()
		if !closed {
			p.e.log.Warn("warm pool: could not make a sandbox; trying again later", "language", lang, "retry_in", r.wait, "err", err)
		}
		return
	}
	delete(p.retry, lang)
	p.made[lang]++
	if p.extra[lang] > 0 {
		p.busy[lang] = time.Now()
	}
	if p.closed {
		p.mu.Unlock()
		p.discard(ctx, sb)
		return
	}
	p.ready[lang] = append(p.ready[lang], &pooled{sb: sb, key: w.key})
	n := len(p.ready[lang])
	p.mu.Unlock()
	p.e.log.Debug("warm pool: sandbox ready", "language", lang, "id", sb.ID, "ready", n)
	p.poke()
}

// discard removes a pooled sandbox in the background.
func (p *pool) discard(ctx context.Context, sb *Sandbox) {
	p.mu.Lock()
	closed := p.closed
	if !closed {
		p.wg.Add(1)
	}
	p.mu.Unlock()
	if closed {
		// close is waiting: remove it here, synchronously.
		p.remove(ctx, sb)
		return
	}
	go func() {
		defer p.wg.Done()
		p.remove(ctx, sb)
	}()
}

func (p *pool) remove(ctx context.Context, sb *Sandbox) {
	for _, r := range sb.takeRunners() {
		r.close()
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := p.e.be.Remove(rctx, sb.ContainerID); err != nil {
		p.e.log.Warn("warm pool: remove sandbox", "id", sb.ID, "err", err)
	}
}

// close stops refilling and removes every ready sandbox; it returns when
// fills and removals in flight have ended.
func (p *pool) close(ctx context.Context) {
	p.mu.Lock()
	p.closed = true
	for _, stop := range p.stops {
		stop()
	}
	var all []*Sandbox
	for _, l := range p.ready {
		for _, pd := range l {
			all = append(all, pd.sb)
		}
	}
	p.ready = map[string][]*pooled{}
	p.mu.Unlock()
	var wg sync.WaitGroup
	for _, sb := range all {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.remove(ctx, sb)
		}()
	}
	wg.Wait()
	p.wg.Wait()
}
