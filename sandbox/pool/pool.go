package pool

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Warm pool limits.
const (
	// maxSize caps [pool] size and max_size per language, whatever the
	// file says.
	maxSize = 16
	// maxAge is when a ready sandbox is replaced by a fresh one (a new
	// image tag, a long-idle interpreter).
	maxAge = 6 * time.Hour
	// LabelTTL is the expiry label of a pooled container: the owner
	// replaces it long before, so only a reaper of a server that is gone
	// (on another host) ever acts on it.
	LabelTTL = 24 * time.Hour
	// maxFilling bounds creations in flight, so refilling (and growing in
	// a burst) never floods the container engine.
	maxFilling = 4
	// maxBackoff bounds the wait after failed refills.
	maxBackoff = time.Minute
	// fillTimeout bounds one refill (image check, create, interpreter).
	fillTimeout = 2 * time.Minute
)

// Box is a sandbox the pool holds, with what the pool reads of it.
type Box[S any] struct {
	Sandbox     S
	ID          string // for logs
	ContainerID string // matched against Engine.Running
	Created     time.Time
}

// Want is one language the pool should hold.
type Want[S any, K comparable] struct {
	Language string
	// Key is what must match between a ready sandbox and a claim.
	Key K
	// Make makes one sandbox of this language. soft, which Close
	// cancels, bounds the image check and the interpreter's start; ctx
	// the rest (a creation cancelled half-way can leave a container the
	// engine made but never named).
	Make func(ctx, soft context.Context) (Box[S], error)
}

// Sizes are the configured bounds of each language's pool.
type Sizes struct {
	Size, Most int           // [pool] size; what it may grow to
	Idle       time.Duration // [pool] idle_seconds
}

// SizesOf reads the bounds from cfg.
func SizesOf(cfg *config.Config) Sizes {
	size := min(max(cfg.Pool.Size, 0), maxSize)
	sz := Sizes{
		Size: size,
		Most: min(max(cfg.Pool.MaxSize, size), maxSize, max(cfg.Limits.MaxSandboxes, size)),
		Idle: time.Duration(cfg.Pool.IdleSeconds) * time.Second,
	}
	if size == 0 {
		// size 0 turns the pool off: it does not grow in bursts either.
		sz.Most = 0
	}
	return sz
}

// Engine is what the pool needs from the engine that owns it.
type Engine[S any, K comparable] interface {
	// Wanted returns the languages to hold now, in the config's order,
	// and their bounds; none while the service is paused.
	Wanted(ctx context.Context) ([]Want[S, K], Sizes)
	// Running returns, by container id, whether the containers of boxes
	// (the ready sandboxes) run.
	Running(ctx context.Context, boxes []S) (map[string]bool, error)
	// Remove removes a sandbox the pool made and no claim took.
	Remove(ctx context.Context, sb S)
}

// Options configures a Pool.
type Options[S any, K comparable] struct {
	Engine Engine[S, K]
	// Tick is how often Run also asks which containers still run.
	Tick time.Duration
	Log  *slog.Logger
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Stats is the pool of one language: what it holds, what it aims to hold,
// and how many it made ready and handed out since the start.
type Stats struct {
	Ready, Target, Made, Claimed int
}

// Pool keeps ready sandboxes of type S, matched by settings key K; see the
// package doc.
//
// A claim takes a sandbox out of the ready list under the pool's lock, so
// it is never handed out twice.
type Pool[S any, K comparable] struct {
	e    Engine[S, K]
	tick time.Duration
	log  *slog.Logger
	now  func() time.Time
	kick chan struct{}

	mu      sync.Mutex
	ready   map[string][]item[S, K] // by language, oldest first
	filling map[string]int
	retry   map[string]retry
	// extra is how far each language's pool has grown above [pool] size;
	// busy is its last claim or fill, from which idle_seconds count.
	extra map[string]int
	busy  map[string]time.Time
	// keys are the settings each language's pool is made with now.
	keys map[string]K
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

// item is a ready sandbox and the settings it was made with.
type item[S any, K comparable] struct {
	box Box[S]
	key K
}

// retry is the back-off after a failed refill.
type retry struct {
	wait time.Duration
	next time.Time
}

// New returns an empty pool; Run fills it.
func New[S any, K comparable](o Options[S, K]) *Pool[S, K] {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Tick <= 0 {
		o.Tick = 5 * time.Second
	}
	return &Pool[S, K]{
		e: o.Engine, tick: o.Tick, log: o.Log, now: o.Now, kick: make(chan struct{}, 1),
		ready: map[string][]item[S, K]{}, filling: map[string]int{}, retry: map[string]retry{},
		stops: map[int]context.CancelFunc{},
		extra: map[string]int{}, busy: map[string]time.Time{}, keys: map[string]K{},
		made: map[string]int{}, claimed: map[string]int{}, targets: map[string]int{},
	}
}

// Poke asks the pool to look at itself soon (the config changed, a claim).
func (p *Pool[S, K]) Poke() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}

// Run refills the pool until ctx ends.
func (p *Pool[S, K]) Run(ctx context.Context) {
	t := time.NewTicker(p.tick)
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

// Stats returns the figures of language's pool.
func (p *Pool[S, K]) Stats(language string) Stats {
	p.mu.Lock()
	defer p.mu.Unlock()
	return Stats{Ready: len(p.ready[language]), Target: p.targets[language], Made: p.made[language], Claimed: p.claimed[language]}
}

// target is how many ready sandboxes of lang the pool holds now: size,
// plus what a burst added until it went idle. Call with p.mu held.
func (p *Pool[S, K]) target(lang string, sz Sizes, now time.Time) int {
	if p.extra[lang] > 0 && p.filling[lang] == 0 && now.Sub(p.busy[lang]) > sz.Idle {
		p.log.Debug("warm pool: idle; shrinking back", "language", lang, "size", sz.Size)
		delete(p.extra, lang)
	}
	return min(sz.Size+p.extra[lang], sz.Most)
}
