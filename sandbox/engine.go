package sandbox

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/install"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/interp"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netglue"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/output"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/pool"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/record"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/sbfiles"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Options configures an Engine.
type Options struct {
	Backend backend.Backend
	Config  *config.Watcher
	// State records sandboxes for the tray and holds the pause flag; nil
	// keeps nothing on disk.
	State *state.Store
	Log   *slog.Logger
	// OwnerID identifies this server instance in labels (and names its
	// lock file in the state directory); empty: random.
	OwnerID string
	// TickInterval is how often expiry is checked; default 5s.
	TickInterval time.Duration
	// TTLUnit is how long one of ttl_minutes lasts: a minute, except in
	// tests that watch a sandbox expire.
	TTLUnit time.Duration
	// UsageInterval is how often Run samples the live sandboxes' usage for
	// sandbox_list; default 5s.
	UsageInterval time.Duration
	// FigureBudget bounds the figure bytes all runs keep at once (see
	// interp.Budget); default four calls' worth of limits.image_bytes.
	FigureBudget int64
	// MemBudget bounds the bytes from sandboxes that calls buffer at once
	// (0: output.DefaultMemBudget).
	MemBudget int64
	// Ask asks a person whether an allowlist sandbox may reach a host no
	// entry allows (never called when network.ask is false); nil refuses
	// such hosts.
	Ask func(ctx context.Context, req AskRequest) (netproxy.Decision, error)
	// AskEntries asks a person whether a new sandbox of language may
	// reach entries its sandbox_create named that network.allow_domains
	// does not cover (never called when network.ask is false); nil
	// refuses such a create. ctx is the create's.
	AskEntries func(ctx context.Context, language string, entries []string) (netproxy.Decision, error)
	// Resolver looks up the names asked about before a question
	// (default net.DefaultResolver).
	Resolver netproxy.Resolver
}

// Engine creates, runs and removes the sandboxes of one server process.
type Engine struct {
	// ask is Options.Ask.
	ask func(ctx context.Context, req AskRequest) (netproxy.Decision, error)
	// askEntries is Options.AskEntries.
	askEntries func(ctx context.Context, language string, entries []string) (netproxy.Decision, error)
	resolver   netproxy.Resolver
	be         backend.Backend
	// imageTools caches toolPath's answers per image (image + "\x00" +
	// tool → path, "" for absent): a sandbox's root is its image's, read
	// only, and each look-up is an engine call (on Kubernetes an exec
	// through the API server) every new sandbox's agent start would pay.
	imageTools sync.Map
	cfg        *config.Watcher
	st         *state.Store
	log        *slog.Logger
	owner      string
	pid        int
	hostname   string
	// installation is the state directory's installation id, on every
	// object this engine makes (inventory.Mine); an engine without a state
	// directory is an installation of its own.
	installation string
	// lock is held from before the engine makes anything until Close:
	// the proof, to reapers, that this server is alive (state/servers.go).
	// regErr says why it could not be taken; the engine then makes
	// nothing.
	lock   *state.ServerLock
	regErr error
	// info is what the server says of itself beside its lock
	// (lifecycle.go), once announced.
	infoMu    sync.Mutex
	info      state.ServerInfo
	announced bool
	infoDone  bool // closed: nothing is announced any more
	tick      time.Duration
	ttlUnit   time.Duration

	mu       sync.Mutex
	boxes    map[string]*Sandbox
	creating int
	// naming counts, by container name, the containers that creates
	// under way are making or claiming: admit counts those once, as
	// creating, even when the engine already lists them.
	naming map[string]int
	closed bool
	bg     sync.WaitGroup // background removals
	// stopping holds the container ids of stopped sandboxes whose removal
	// is under way (lifecycle.go): they no longer count against max_sandboxes.
	stopping sync.Map
	watchers sync.WaitGroup // one per sandbox, waiting for its container to stop (death.go)
	// graves says why sandboxes whose container stopped on their own are
	// gone, for later calls on their ids; graveOrder bounds it.
	graves     map[string]*diedError
	graveOrder []string

	runtimeOnce sync.Once
	runtime     string

	pool *warmPool        // warm sandboxes (sandbox/pool; pool.go)
	recs *record.Recorder // state records and transcripts, written in the background
	// freed is closed (and replaced) whenever a sandbox goes, for
	// one-shot runs waiting for a slot under max_sandboxes.
	freed chan struct{}

	usageEvery time.Duration // usage sampling period (list.go)
	usageKick  chan struct{} // asks the sampler for a round now

	// figures is the server-wide figure budget (interp.Budget).
	figures *interp.Budget
	mem     *output.MemBudget // the server-wide memory budget (sandbox/output)

	streams *agentconn.Budget // the server-wide stream budget
}

// NewEngine returns an engine; call Run to start its background work and
// Close to remove its sandboxes.
func NewEngine(o Options) *Engine {
	if o.Log == nil {
		o.Log = slog.New(slog.DiscardHandler)
	}
	if o.OwnerID == "" {
		o.OwnerID = newID()
	}
	if o.TickInterval <= 0 {
		o.TickInterval = 5 * time.Second
	}
	if o.UsageInterval <= 0 {
		o.UsageInterval = defaultUsageInterval
	}
	if o.TTLUnit <= 0 {
		o.TTLUnit = time.Minute
	}
	if o.FigureBudget <= 0 {
		imageBytes := config.Default().Limits.ImageBytes
		if o.Config != nil {
			imageBytes = o.Config.Current().Limits.ImageBytes
		}
		o.FigureBudget = interp.BudgetFor(imageBytes)
	}
	host, _ := os.Hostname()
	e := &Engine{
		be: o.Backend, cfg: o.Config, st: o.State, log: o.Log,
		owner: o.OwnerID, pid: os.Getpid(), hostname: host, tick: o.TickInterval, ttlUnit: o.TTLUnit,
		boxes: map[string]*Sandbox{}, naming: map[string]int{},
		recs: record.New(o.State, o.Log), freed: make(chan struct{}),
		usageEvery: o.UsageInterval, usageKick: make(chan struct{}, 1),
		figures:    interp.NewBudget(o.FigureBudget),
		mem:        output.NewMemBudget(o.MemBudget),
		streams:    agentconn.NewBudget(),
		ask:        o.Ask,
		askEntries: o.AskEntries,
		resolver:   o.Resolver,
	}
	if e.resolver == nil {
		e.resolver = net.DefaultResolver
	}
	if st, ok := e.be.(backend.AgentStager); ok {
		st.StageAgents(e.stageAgent)
	}
	e.register()
	e.pool = newPool(e)
	if o.Config != nil {
		o.Config.OnChange(func(*config.Config) { e.pool.Poke() })
	}
	return e
}

// register gives the engine its installation id and takes its server
// lock, before anything is made.
func (e *Engine) register() {
	if e.st == nil {
		e.installation = "ephemeral-" + newID()
		return
	}
	inst, err := e.st.InstallationID()
	if err != nil {
		e.regErr = fmt.Errorf("this server cannot make sandboxes: %w", err)
		e.log.Error("installation id", "err", err)
		return
	}
	e.installation = inst
	lock, err := e.st.LockServer(e.owner)
	if err != nil {
		e.regErr = fmt.Errorf("this server cannot make sandboxes: %w", err)
		e.log.Error("server lock", "err", err)
		return
	}
	e.lock = lock
}

// Installation returns the installation id this engine labels its objects
// with.
func (e *Engine) Installation() string { return e.installation }

// Owner returns this engine's instance id (the io.mcp-sandbox.owner label).
func (e *Engine) Owner() string { return e.owner }

// Config returns the configuration in force.
func (e *Engine) Config() *config.Config { return e.cfg.Current() }

// OnConfigChange registers f to be called with each new configuration
// once it is in force (Config returns it), from the watcher's goroutine.
func (e *Engine) OnConfigChange(f func(*config.Config)) {
	if e.cfg != nil {
		e.cfg.OnChange(f)
	}
}

// Backend returns the engine's backend.
func (e *Engine) Backend() backend.Backend { return e.be }

// newID returns a short random sandbox id: 12 lower-case base-32 characters.
func newID() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[b[i]&31]
	}
	return string(b)
}

// Sandbox is a sandbox this engine owns.
type Sandbox struct {
	ID          string
	ContainerID string
	Language    string
	Lang        config.Language
	Image       string
	Network     string
	Client      string
	Limits      inventory.Limits
	User        string
	CreatedAt   time.Time
	// scope is the client that made it (list.go); set before the engine
	// lists it, never changed.
	scope string

	transcript transcript
	// outputs numbers the calls' output files; oneShot: the sandbox of a
	// one-shot run_code, which keeps none (exec.go).
	outputs atomic.Int64
	oneShot atomic.Bool

	mu       sync.Mutex
	ttl      time.Duration
	lastUsed time.Time
	busy     int
	removing bool
	// platformExpiry is when the backend's platform ends the sandbox by
	// itself (Expirer; zero: not known yet, or the backend has none), and
	// expiryFixed is set when it cannot move (lifecycle.go).
	platformExpiry time.Time
	expiryFixed    bool
	// usage is the latest usage sample (list.go).
	usage    usageSample
	oomKills int
	// alive ends, with a *diedError as its cause, when the container stops
	// on its own; kill ends it; unwatch stops the watcher (death.go).
	alive   context.Context
	kill    context.CancelCauseFunc
	unwatch context.CancelFunc
	// pooled watches the container while the sandbox waits in the warm
	// pool (pool.go); set once, before the pool holds it.
	pooled *poolWatch
	// runners holds the resident interpreters (see runcode.go).
	runners map[string]residentRunner
	// env is sandbox_create's environment, given to the sandbox's own
	// processes only (never to the server's: see sbfiles.ServerEnv).
	env []string
	// allowDomains are sandbox_create's allow_domains (allowlist only;
	// empty: the config's network.allow_domains).
	allowDomains []string
	// procs are the background processes sandbox_exec started, newest
	// last (at most maxProcesses); bgStarted counts them all (exec.go).
	procs     []BackgroundProcess
	bgStarted int
	// tools caches toolPath's answers ("" for absent).
	tools map[string]string

	// installLock serialises install_packages calls, which own installs.
	installLock callLock
	installs    install.State
}

// ExpiresAt is when the sandbox expires if it stays idle.
func (s *Sandbox) ExpiresAt() time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastUsed.Add(s.ttl)
}

// Transcript returns what ran in the sandbox, oldest first.
func (s *Sandbox) Transcript() string { return s.transcript.String() }

// transcript is a sandbox's record.Transcript, taking the engine's results.
type transcript struct{ record.Transcript }

// add appends an entry: what ran, how it ended (res; nil: none), a note.
func (t *transcript) add(kind, input string, res *ExecResult, note string) {
	var r *record.Result
	if res != nil {
		r = &record.Result{ExitCode: res.ExitCode, DurationMS: res.DurationMS, TimedOut: res.TimedOut,
			OOMKilled: res.OOMKilled, Truncated: res.Truncated, Stdout: res.Stdout, Stderr: res.Stderr}
	}
	t.Add(kind, input, r, note)
}

// CreateResult is the sandbox Create made.
type CreateResult struct{ *Sandbox }

// Create makes a new sandbox.
func (e *Engine) Create(ctx context.Context, req CreateRequest) (CreateResult, error) {
	sb, err := e.newSandbox(ctx, req)
	return CreateResult{sb}, err
}

// newSandbox is Create: from the pool or a new container.
func (e *Engine) newSandbox(ctx context.Context, req CreateRequest) (*Sandbox, error) {
	// The client's name goes into a label, the record, logs and `ps`.
	req.Client = printable.Clean(req.Client, printable.NameMax)
	cfg := e.cfg.Current()
	p, err := e.planAsking(ctx, cfg, req)
	if err != nil {
		return nil, err
	}
	if err := e.admit(ctx, cfg); err != nil {
		return nil, err
	}
	// The names this create gives containers (a claimed pool sandbox's, a
	// fresh one's), recorded before the engine lists them under it.
	var names []string
	name := func(n string) {
		e.mu.Lock()
		e.naming[n]++
		e.mu.Unlock()
		names = append(names, n)
	}
	defer func() {
		e.mu.Lock()
		for _, n := range names {
			if e.naming[n]--; e.naming[n] <= 0 {
				delete(e.naming, n)
			}
		}
		e.mu.Unlock()
		e.admitted()
	}()
	var sb *Sandbox
	if sb = e.claimPooled(ctx, cfg, p, req, name); sb != nil {
		sb, err = e.adopt(ctx, sb)
	} else {
		sb, err = e.create(ctx, cfg, p, req, name)
	}
	if err == nil && sb.Network == NetworkAllowlist {
		if err = e.requireProxy(ctx, sb); err != nil {
			e.stop(context.WithoutCancel(ctx), sb)
			return nil, err
		}
	}
	if err == nil {
		sb.oneShot.Store(req.oneShot)
	}
	if err == nil && !req.oneShot {
		e.warmAgentOnCreate(ctx, sb)
	}
	return sb, err
}

// agentOnCreateWait bounds how long Create waits for a new sandbox's
// agent on a backend.AgentOnCreate backend (a start takes a second or two
// there): a start that takes longer goes on in the background, and the
// sandbox is returned.
const agentOnCreateWait = 10 * time.Second

// warmAgentOnCreate starts sb's command agent in the background
// (warmAgentLater) and, on a backend.AgentOnCreate backend, waits for
// that start to end (agentOnCreateWait at most, and while ctx lasts), so
// that the sandbox takes commands when Create returns it. A start that
// fails leaves commands to the engine's exec, as always.
func (e *Engine) warmAgentOnCreate(ctx context.Context, sb *Sandbox) {
	started := e.warmAgentLater(sb)
	if _, ok := e.be.(backend.AgentOnCreate); !ok {
		return
	}
	t := time.NewTimer(agentOnCreateWait)
	defer t.Stop()
	select {
	case <-started:
	case <-ctx.Done():
	case <-t.C:
	}
}

// warmAgentLater starts sb's command agent in the background, as the pool
// does for the sandboxes it makes, so that the first sandbox_exec or file
// call does not wait for it (on Kubernetes under gVisor a start takes
// seconds: the agent is copied in and attached through the API server).
// It ends when the agent runs, or sb stops (agentFor returns at once for a
// backend that cannot attach, an agent already running or given up on);
// Close waits for it. The channel it returns is closed then. A one-shot
// run_code's sandbox does not get it: it is removed once its code ran.
func (e *Engine) warmAgentLater(sb *Sandbox) <-chan struct{} {
	done := make(chan struct{})
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		defer close(done)
		ctx, cancel := sb.bound(context.Background())
		defer cancel()
		e.warmAgent(ctx, sb)
	}()
	return done
}

// admit checks the pause flag and max_sandboxes and reserves a slot.
func (e *Engine) admit(ctx context.Context, cfg *config.Config) error {
	if e.st != nil && e.st.Paused() {
		return fmt.Errorf("%w: MCP Sandbox is paused from its tray; choose Start in the tray menu to resume", ErrPaused)
	}
	if e.regErr != nil {
		return e.regErr
	}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return ErrClosed
	}
	e.creating++
	e.mu.Unlock()
	listed, err := e.countActive(ctx)
	if err != nil {
		e.admitted()
		return err
	}
	// Creates under way count once each, as creating, whether or not the
	// engine listed their container yet (taken after the list, so one that
	// ended meanwhile is in the list and no longer creating).
	e.mu.Lock()
	creating := e.creating
	n, others := 0, 0
	for _, c := range listed {
		if e.naming[c.name] == 0 {
			n++
			if !c.mine {
				others++
			}
		}
	}
	e.mu.Unlock()
	if n+creating > cfg.Limits.MaxSandboxes {
		e.admitted()
		return fmt.Errorf("%w: %s; %s, or raise limits.max_sandboxes in %s (%s)",
			ErrLimit, limitCount(n, creating-1, others, cfg.Limits.MaxSandboxes), limitAdvice(n, others), cfg.Source, appliesSoon)
	}
	return nil
}

// limitCount says how many sandboxes fill the limit and whose they are:
// the limit is for this installation (every AI client of this user runs a
// server of its own); other installations' sandboxes on the engine do not
// count. starting counts other creates under way.
func limitCount(n, starting, others, max int) string {
	s := fmt.Sprintf("%d sandboxes of this MCP Sandbox installation are running", n)
	if starting > 0 {
		s += fmt.Sprintf(" and %d more are being made", starting)
	}
	s += fmt.Sprintf(", the most limits.max_sandboxes (%d) allows", max)
	switch {
	case others == n && n > 0:
		s += "; all the running ones were made by other servers of this installation (another AI client's, or another session's)"
	case others > 0:
		s += fmt.Sprintf("; %d of the running ones were made by other servers of this installation (another AI client's, or another session's)", others)
	}
	return s
}

// limitAdvice says how to make room: this server's sandboxes with
// sandbox_stop, the others' from the tray or with mcp-sandbox stop.
func limitAdvice(n, others int) string {
	switch {
	case others == 0:
		return "stop one with sandbox_stop (sandbox_list shows them)"
	case others == n:
		return "stop them from the MCP Sandbox tray or with `mcp-sandbox stop`"
	default:
		return "stop one with sandbox_stop (sandbox_list shows this server's) or the others' from the MCP Sandbox tray or with `mcp-sandbox stop`"
	}
}

func (e *Engine) admitted() {
	e.mu.Lock()
	e.creating--
	e.mu.Unlock()
}

// countActive lists the managed containers of this installation (Mine),
// whichever of its servers made them, except unclaimed pool ones:
// max_sandboxes is this user's budget, shared by their AI clients, and one
// user's sandboxes never refuse another's. A claimed pool container keeps
// its pool label but has been renamed, so it counts.
func (e *Engine) countActive(ctx context.Context) ([]activeContainer, error) {
	list, err := e.be.List(ctx)
	if err != nil {
		return nil, err
	}
	var n []activeContainer
	for _, c := range list {
		if !inventory.Mine(c.Labels, e.installation) || inventory.UnclaimedPool(c) || c.Labels[backend.LabelHelper] != "" || c.State == "exited" || c.State == "dead" {
			continue
		}
		if _, ok := e.stopping.Load(c.ID); ok {
			continue
		}
		n = append(n, activeContainer{name: c.Name, mine: c.Labels[backend.LabelOwner] == e.owner})
	}
	return n, nil
}

// activeContainer is a sandbox's container that counts towards
// max_sandboxes, and whether this engine made it.
type activeContainer struct {
	name string
	mine bool
}

// create makes a sandbox from a checked plan.
// name is told the container's name before it is made.
func (e *Engine) create(ctx context.Context, cfg *config.Config, p plan, req CreateRequest, name func(string)) (*Sandbox, error) {
	img, err := e.be.EnsureImage(ctx, p.Image, cfg.Images.Pull, req.Progress)
	if l, _ := cfg.Language(p.Language); (errors.Is(err, backend.ErrPull) || errors.Is(err, backend.ErrImageNotFound)) && p.Image == l.Image {
		// The configured image: say where it is chosen. (An image the
		// call asked for is the caller's to change.)
		table, key := cfg.ImageSetting(p.Language)
		return nil, fmt.Errorf("%w; or use an image this engine has (`docker images` lists them): set %s = \"IMAGE\" under [%s] in %s (%s)",
			err, key, table, cfg.File(), appliesSoon)
	}
	if err != nil {
		return nil, err
	}
	id := newID()
	now := time.Now()
	sb := &Sandbox{
		ID: id, Language: p.Language, Lang: p.Lang, Image: p.Image, Network: p.Network,
		Client: req.Client, Limits: p.Limits, User: sandboxUser(img.User), CreatedAt: now,
		ttl: time.Duration(p.TTL) * e.ttlUnit, lastUsed: now, env: p.Env,
		allowDomains: p.AllowDomains,
	}
	spec := e.containerSpec(ctx, cfg, sb, backend.ContainerName(id), false)
	name(spec.Name)
	cid, err := e.be.Create(ctx, spec)
	if err != nil {
		return nil, limitRefused(cfg, req, p.Limits, err)
	}
	sb.ContainerID = cid
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		e.removeContainer(context.WithoutCancel(ctx), cid)
		return nil, ErrClosed
	}
	e.watch(ctx, sb)
	sb.scope = scopeOf(ctx)
	e.boxes[id] = sb
	e.mu.Unlock()
	e.record(sb, true)
	e.log.Info("sandbox created", "id", id, "language", sb.Language, "image", sb.Image, "client", sb.Client)
	return sb, nil
}

// containerEnv is sbfiles.SandboxEnv, with the proxy's variables in allowlist mode.
func containerEnv(network string) []string {
	if network != NetworkAllowlist {
		return sbfiles.SandboxEnv
	}
	return append(append([]string{}, sbfiles.SandboxEnv...), netglue.ProxyEnv()...)
}

func (e *Engine) containerSpec(ctx context.Context, cfg *config.Config, sb *Sandbox, name string, pooled bool) backend.ContainerSpec {
	labels := map[string]string{
		backend.LabelManaged:      "true",
		backend.LabelID:           sb.ID,
		backend.LabelOwner:        e.owner,
		backend.LabelInstallation: e.installation,
		backend.LabelOwnerPID:     strconv.Itoa(e.pid),
		backend.LabelOwnerHost:    e.hostname,
		backend.LabelLanguage:     sb.Language,
		backend.LabelExpiresAt:    sb.CreatedAt.Add(sb.ttl).UTC().Format(time.RFC3339),
		backend.LabelClient:       sb.Client,
		backend.LabelNetwork:      sb.Network,
		backend.LabelWorkspaceMB:  strconv.Itoa(sb.Limits.WorkspaceMB),
		backend.LabelMemoryMB:     strconv.Itoa(sb.Limits.MemoryMB),
		backend.LabelCPUs:         strconv.FormatFloat(sb.Limits.CPUs, 'f', -1, 64),
		backend.LabelPids:         strconv.Itoa(sb.Limits.Pids),
		backend.LabelExecTimeout:  strconv.Itoa(sb.Limits.ExecTimeoutSeconds),
	}
	if pooled {
		labels[backend.LabelPool] = "true"
		labels[backend.LabelExpiresAt] = sb.CreatedAt.Add(pool.LabelTTL).UTC().Format(time.RFC3339)
	}
	return backend.ContainerSpec{
		Name:        name,
		Image:       sb.Image,
		Labels:      labels,
		Env:         containerEnv(sb.Network),
		User:        sb.User,
		Network:     sb.Network,
		MemoryBytes: int64(sb.Limits.MemoryMB) << 20,
		NanoCPUs:    int64(sb.Limits.CPUs * 1e9),
		Pids:        int64(sb.Limits.Pids),
		WorkspaceMB: sb.Limits.WorkspaceMB,
		TmpMB:       min(256, max(64, sb.Limits.MemoryMB/4)),
		Runtime:     e.runtimeFor(ctx, cfg),
		CacheUser:   helperUser(sb.User),
	}
}

// runtimeFor resolves docker.runtime: "auto" means runsc when the engine
// has it registered.
func (e *Engine) runtimeFor(ctx context.Context, cfg *config.Config) string {
	switch cfg.Docker.Runtime {
	case "auto":
		e.runtimeOnce.Do(func() {
			if rc, ok := e.be.(backend.RuntimeChecker); ok {
				if yes, err := rc.RuntimeRegistered(ctx, "runsc"); err == nil && yes {
					e.runtime = "runsc"
				}
			}
		})
		return e.runtime
	case "runc", "runsc":
		return cfg.Docker.Runtime
	}
	return ""
}

// record updates the sandbox's state record for the tray (its previews
// too, which the window offers to open, and its network summary); the write
// happens in the background, coalesced to about one a second (see
// sandbox/record), so no call waits for an fsync.
func (e *Engine) record(sb *Sandbox, claimed bool) {
	if e.st == nil {
		return
	}
	sb.mu.Lock()
	r := state.Record{
		ID: sb.ID, ContainerID: sb.ContainerID, Owner: e.owner, OwnerPID: e.pid,
		Client: sb.Client, Language: sb.Language, Image: sb.Image, Network: sb.Network,
		Claimed: claimed, CreatedAt: sb.CreatedAt, ExpiresAt: sb.lastUsed.Add(sb.ttl), LastUsed: sb.lastUsed,
		Busy: sb.busy > 0,
	}
	x, _ := sb.runners[previewRunner].(previewSet)
	sb.mu.Unlock()
	if x.Set != nil {
		r.Exposed = x.Records()
	}
	r.Traffic = e.networkOf(sb).traffic()
	e.recs.Put(r)
	sb.transcript.Watch(func() { e.recs.PutLog(sb.ID, &sb.transcript.Transcript) })
}

// Get returns a sandbox this engine owns.
func (e *Engine) Get(id string) (*Sandbox, error) {
	e.mu.Lock()
	sb, ok := e.boxes[id]
	grave := e.graves[id]
	e.mu.Unlock()
	if ok && grave == nil {
		grave = sb.died()
	}
	if grave != nil {
		return nil, goneErr(grave)
	}
	if !ok || sb.isRemoving() {
		if !validSandboxID(id) {
			return nil, fmt.Errorf("%w: %q is not a sandbox id; sandbox_list shows yours", ErrNotFound, record.Clip(id, 64))
		}
		return nil, notInSession(id)
	}
	return sb, nil
}

func notInSession(id string) error {
	return fmt.Errorf("%w: no sandbox %s in this session (it may have expired or been stopped); sandbox_list shows yours, sandbox_create makes a new one", ErrNotFound, id)
}

func validSandboxID(id string) bool {
	if len(id) < 4 || len(id) > 32 {
		return false
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func (s *Sandbox) isRemoving() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.removing
}

// beginRemoval marks the sandbox as being removed and takes its resident
// runners for the caller to close. It reports false, taking nothing, when
// another caller is already removing it.
func (s *Sandbox) beginRemoval() (map[string]residentRunner, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removing {
		return nil, false
	}
	s.removing = true
	runners := s.runners
	s.runners = nil
	return runners, true
}

// Sandboxes returns the sandboxes this engine owns.
func (e *Engine) Sandboxes() []*Sandbox {
	e.mu.Lock()
	all := make([]*Sandbox, 0, len(e.boxes))
	for _, sb := range e.boxes {
		all = append(all, sb)
	}
	e.mu.Unlock()
	out := all[:0]
	for _, sb := range all {
		if !sb.isRemoving() { // removing is guarded by sb.mu
			out = append(out, sb)
		}
	}
	return out
}

// remove removes a sandbox's container and forgets it.
func (e *Engine) remove(ctx context.Context, sb *Sandbox) error {
	runners, ok := sb.beginRemoval()
	if !ok {
		// Another caller is removing it (Close racing a one-shot's removal).
		return nil
	}
	for _, r := range runners {
		r.close()
	}
	err := e.be.Remove(ctx, sb.ContainerID)
	if err != nil {
		sb.mu.Lock()
		sb.removing = false
		sb.mu.Unlock()
		return err
	}
	sb.removed()
	e.forget(sb.ID)
	e.log.Info("sandbox removed", "id", sb.ID)
	return nil
}

func (e *Engine) forget(id string) {
	e.mu.Lock()
	if sb := e.boxes[id]; sb != nil && sb.unwatch != nil {
		sb.unwatch()
	}
	delete(e.boxes, id)
	close(e.freed)
	e.freed = make(chan struct{})
	e.mu.Unlock()
	e.recs.Remove(id)
}

// slotFreed returns a channel that is closed when a sandbox next goes.
func (e *Engine) slotFreed() <-chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.freed
}

// removeLater removes a sandbox in the background (a one-shot run's, so the
// caller gets its result at once); Close waits for it.
func (e *Engine) removeLater(ctx context.Context, sb *Sandbox) {
	e.bg.Add(1)
	go func() {
		defer e.bg.Done()
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if err := e.remove(rctx, sb); err != nil {
			e.log.Warn("remove one-shot sandbox", "id", sb.ID, "err", err)
		}
	}()
}

func (e *Engine) removeContainer(ctx context.Context, cid string) {
	rctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if err := e.be.Remove(rctx, cid); err != nil {
		e.log.Warn("remove container", "container", cid, "err", err)
	}
}

// Close refuses new work and removes every sandbox this engine owns. It is
// what a server does when its client goes away.
func (e *Engine) Close(ctx context.Context) error {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		e.pool.Close(ctx)
	}()
	_, err := e.StopAll(ctx, StopRequest{})
	e.bg.Wait()
	// Watchers of sandboxes that could not be removed stop too.
	e.mu.Lock()
	for _, sb := range e.boxes {
		if sb.unwatch != nil {
			sb.unwatch()
		}
	}
	e.mu.Unlock()
	e.watchers.Wait()
	<-drained
	e.recs.Flush()
	// Only now may a reaper take what could not be removed. The info file
	// goes with the lock, and is not written again.
	e.infoMu.Lock()
	e.announced, e.infoDone = false, true
	e.infoMu.Unlock()
	if rerr := e.lock.Release(); rerr != nil {
		e.log.Warn("release server lock", "err", rerr)
	}
	return err
}
