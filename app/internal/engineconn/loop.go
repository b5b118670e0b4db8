package engineconn

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/backendrpc"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Conn is an engine that answered, and the model that follows its
// sandboxes.
type Conn struct {
	// Client is the Docker engine's client; nil on a cluster.
	Client *client.Client
	// Backend is the engine's backend: every read and Stop goes through
	// it (the backend contract), whichever kind it is.
	Backend backend.Backend
	Model   *sandboxwatch.Model
	// Cluster is where the sandboxes run on Kubernetes; nil on Docker.
	Cluster *Cluster
	// EntryHost is the DOCKER_HOST written into client entries
	// (EntryHost of the chosen endpoint).
	EntryHost string
}

// Look is what one look for the engine found.
type Look struct {
	// Conn is the engine that answered; nil when none did, and Err says
	// why.
	Conn *Conn
	Err  error
	// Result is what the rule found; never nil.
	Result *dockerhost.Result
	// ConfigHost is the config's docker.host the look was made under.
	ConfigHost string
	// Key is EngineKey of the config the look was made under.
	Key string
	// Cluster is the Kubernetes cluster looked for (backend.kind =
	// "kubernetes"), also when it did not answer; nil on Docker.
	Cluster *Cluster
}

// Options configures a Loop.
type Options struct {
	// Getenv reads the environment (dockerhost.Options.Getenv).
	Getenv func(string) string
	// Config gives docker.host and the config file's path, read anew at
	// each look.
	Config *config.Watcher
	// Store is the state directory, for the model's lister.
	Store *state.Store
	Log   *slog.Logger
	// Source says how the model reads the engine; the loop sets its
	// Lister and Client.
	Source sandboxwatch.DockerSource
	// OnChange receives the model's snapshots, on the model's goroutine.
	OnChange func(sandboxwatch.Snapshot)
	// Looking, when set, is called before each look for the engine.
	Looking func()
	// Looked is called with what each look found, on the loop's
	// goroutine, before the engine is followed.
	Looked func(ctx context.Context, l Look)
	// Lost, when set, is called when the events stream of the engine
	// followed ends with err (the engine went away), once it is no longer
	// followed, on the loop's goroutine.
	Lost func(err error)
	// OpenCluster connects to the cluster when backend.kind is
	// "kubernetes"; nil is through Server (a child of the loop's).
	OpenCluster OpenCluster
	// Server is the server binary's path (bundled.Find), which reads a
	// cluster for the loop; "" when it was not found, and ServerErr says
	// why.
	Server    string
	ServerErr error
	// PollInterval is how often a cluster's sandboxes are listed;
	// default 5s.
	PollInterval time.Duration
}

// Loop finds the engine, follows it until it goes away and looks again:
// 30 seconds after a look found none, 2 seconds after the engine followed
// went away, and at once on Redetect. A Kubernetes cluster is followed by
// listing it every PollInterval; a list that fails is the snapshot's Err.
type Loop struct {
	o        Options
	redetect chan struct{}

	child *backendrpc.Client // reads the cluster; the loop's goroutine's

	mu   sync.Mutex
	conn *Conn
	live bool // usage is wanted: every model followed samples it
}

// retry is how long the loop waits before looking again when no engine
// answered.
const retry = 30 * time.Second

// New returns a loop; Run runs it.
func New(o Options) *Loop {
	return &Loop{o: o, redetect: make(chan struct{}, 1)}
}

// Conn returns the engine followed now, or nil when none is.
func (l *Loop) Conn() *Conn {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.conn
}

// SetLive says whether usage is on screen: the model followed now, and
// every model of an engine found later (at start, after Docker came
// back, after Redetect), samples usage while it is.
func (l *Loop) SetLive(on bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.live = on
	if l.conn != nil {
		l.conn.Model.SetLive(on)
	}
}

// EntryHost is the followed engine's EntryHost, or "" when none is
// followed.
func (l *Loop) EntryHost() string {
	if c := l.Conn(); c != nil {
		return c.EntryHost
	}
	return ""
}

// Redetect asks the loop to look for the engine now (the config's
// docker.host changed, "Detect again" was pressed): an engine followed is
// let go and the rule applied again.
func (l *Loop) Redetect() {
	select {
	case l.redetect <- struct{}{}:
	default:
	}
}

// Run follows the engine until ctx is done. The model only lists and
// follows the events stream (no polling), so an idle process stays idle.
func (l *Loop) Run(ctx context.Context) {
	defer l.closeChild()
	for ctx.Err() == nil {
		if l.o.Looking != nil {
			l.o.Looking()
		}
		look := l.look(ctx)
		l.o.Looked(ctx, look)
		conn := look.Conn
		if conn == nil {
			l.wait(ctx, retry)
			continue
		}
		l.setConn(conn)
		runCtx, cancel := context.WithCancel(ctx)
		go func() { // ends with runCtx
			select {
			case <-l.redetect:
				cancel()
			case <-runCtx.Done():
			}
		}()
		err := conn.Model.Run(runCtx)
		cancel()
		if conn.Client != nil {
			conn.Client.Close()
		}
		l.setConn(nil)
		if err != nil && ctx.Err() == nil && conn.Cluster != nil {
			// The child reading the cluster ended: the next look starts
			// another, and says whether the cluster answers.
			l.o.Log.Warn("the cluster's reader ended; looking at the cluster again", "err", err)
			l.wait(ctx, 2*time.Second)
			continue
		}
		if err != nil && ctx.Err() == nil {
			l.o.Log.Warn("lost the Docker events stream; looking for Docker again", "err", err)
			if l.o.Lost != nil {
				l.o.Lost(err)
			}
			l.wait(ctx, 2*time.Second)
		}
	}
}

// setConn follows c (nil: none), its model live if usage is wanted; under
// the lock, so a SetLive meanwhile is never lost.
func (l *Loop) setConn(c *Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.conn = c
	if c != nil {
		c.Model.SetLive(l.live)
	}
}

// look finds the engine by the one rule, with the config's docker.host,
// and prepares to follow it; with backend.kind = "kubernetes", the
// cluster the config names (lookCluster) and never Docker.
func (l *Loop) look(ctx context.Context) Look {
	cfg := l.o.Config.Current()
	if OnCluster(cfg) {
		return l.lookCluster(ctx, cfg)
	}
	l.closeChild() // no cluster: no child waiting
	dctx, cancel := context.WithTimeout(ctx, 8*time.Second)
	defer cancel()
	cli, be, res, err := Dial(dctx, dockerhost.Options{Getenv: l.o.Getenv, ConfigHost: cfg.Docker.Host, ConfigFile: cfg.Source}, l.o.Log)
	look := Look{Err: err, Result: res, ConfigHost: cfg.Docker.Host, Key: EngineKey(cfg)}
	if look.Result == nil {
		look.Result = &dockerhost.Result{}
	}
	if err != nil {
		return look
	}
	src := l.o.Source
	// The pool too: it is counted apart, as warm (sandboxwatch.Count).
	src.Lister = inventory.Lister{Backend: be, State: l.o.Store, Pool: true}
	src.Client = cli
	look.Conn = &Conn{Client: cli, Backend: be, EntryHost: EntryHost(res.Chosen)}
	look.Conn.Model = sandboxwatch.New(sandboxwatch.Options{Source: src, OnChange: l.o.OnChange, Log: l.o.Log})
	return look
}

func (l *Loop) wait(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-l.redetect:
	case <-t.C:
	}
}
