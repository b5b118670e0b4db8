package trayapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/autostart"
	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/startup"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/update"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/memtrim"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Options configures Run.
type Options struct {
	// Hidden starts in the background (the login entry passes it): the
	// window opens only when there is no tray to reach it from.
	Hidden bool
	// Debug logs debug messages, and logs to stderr too.
	Debug bool
	// Executable is the tray's own path, where the bundled server and the
	// window are looked for; "" means os.Executable.
	Executable string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string
}

// Main parses the command line, runs the tray, and returns the exit code.
// It must be called from the main goroutine (macOS wants the menu bar
// there).
func Main(args []string) int {
	fs := flag.NewFlagSet("mcp-sandbox-tray", flag.ContinueOnError)
	hidden := fs.Bool("hidden", false, "start in the background (used at login)")
	var common startup.Flags
	common.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	stopProfile, code, exit := common.Start("mcp-sandbox-tray")
	defer stopProfile()
	if exit {
		return code
	}
	if why := traywin.NoDisplay(os.Getenv); why != "" {
		fmt.Fprintln(os.Stderr, "mcp-sandbox-tray:", why)
		return 1
	}
	return startup.Main("mcp-sandbox-tray", func(ctx context.Context) error {
		return Run(ctx, Options{Hidden: *hidden, Debug: common.Debug})
	})
}

// App is the running tray.
type App struct {
	o      Options
	log    *slog.Logger
	getenv func(string) string
	exe    string
	st     *state.Store
	cfg    *config.Watcher

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	server    bundled.Server
	serverErr error
	// place is where the programs run from; a transient one (macOS disk
	// image, App Translocation) offers "Move to Applications…".
	place installplace.Place
	// relaunch, when set, is the moved bundle started once this tray has
	// let go of the single-instance lock.
	relaunch string
	host     trayHost
	// engine follows the Docker engine; firstRunDone and dockerLost
	// belong to its goroutine.
	engine       *engineconn.Loop
	firstRunDone bool
	dockerLost   bool // Docker was seen and went away, or was never found
	// healthGen numbers the health checks: only the newest publishes.
	healthGen atomic.Int64

	mu        sync.Mutex // guards what follows
	s         trayState
	httpChild *httpChild
	offer     *update.Release
	updateOn  bool
	window    *windowProc
	menu      *menuView // nil without a tray

	trayFileMu   sync.Mutex
	trayFileLast string

	alerts alerts       // failed calls from the audit log (alert.go)
	asks   *askNotifier // set before the first question is shown
	askSt  askState
	// proposalsMu serializes refreshProposals.
	proposalsMu sync.Mutex
	// idle returns free memory to the system once the tray is quiet after
	// a change it drew.
	idle *startup.Releaser
}

// trayState is what the menu is drawn from. Guarded by App.mu.
type trayState struct {
	detecting bool
	dockerOK  bool
	engine    string
	cluster   bool // the engine is a Kubernetes cluster: engine is its place
	sandboxes int
	warm      int
	paused    bool
	clients   []traymenu.Client
	http      traywin.HTTPInfo
	failed    int // failed calls since the person last looked (the badge)
	questions []state.Question
	proposals int    // changes waiting for review (proposals.go)
	attention string // health.Engine.Attention of the last look's check
}

// Run runs the tray until the user quits it or ctx is done. It returns nil
// at once when another instance is running (that one opens its window).
func Run(ctx context.Context, o Options) error {
	a := &App{o: o, getenv: o.Getenv}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	p, err := startup.Begin(startup.Options{Name: "tray", Running: "another tray is running; asked it to open its window",
		Executable: o.Executable, Debug: o.Debug})
	if errors.Is(err, instance.ErrRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	defer p.Close()
	a.exe, a.st, a.log = p.Exe, p.Store, p.Log
	defer func() {
		p.Instance.Close() // before the moved app starts and takes the lock
		a.mu.Lock()
		bundle := a.relaunch
		a.mu.Unlock()
		if bundle != "" {
			if err := installplace.Relaunch(bundle); err != nil {
				a.log.Error("start the moved app", "bundle", bundle, "err", err)
			}
		}
	}()

	var cfgErr error
	a.cfg, cfgErr = config.NewWatcherOrDefaults(config.Path(), 2*time.Second, a.log)
	if cfgErr != nil {
		a.log.Warn("config file invalid; using the defaults until it is fixed", "err", cfgErr)
	}
	a.server, a.serverErr = bundled.Find(a.exe)
	if a.serverErr != nil {
		a.log.Error("bundled server not found", "err", a.serverErr)
	} else {
		a.log.Info("bundled server", "path", a.server.Path, "found", a.server.Source)
	}
	a.place = installplace.Here(a.exe)
	if a.place.Transient() {
		a.log.Warn(a.place.Message())
	}
	a.engine = a.newEngineLoop()
	// Beyond Go's heap: the clean pages of its own code and read-only
	// data, which start-up touched (two thirds of its resident set).
	exe := memtrim.Executable()
	a.idle = startup.NewReleaser(idleRelease, func() { memtrim.DropMapped(exe) }, a.log)
	defer a.idle.Stop()
	a.s.paused = a.st.Paused()
	a.s.detecting = true
	a.ctx, a.cancel = context.WithCancel(ctx)
	defer a.cancel()

	a.host = probeTrayHost()
	a.log.Info("tray host", "bus", a.host.Bus, "watcher", a.host.Watcher, "why", a.host.Why)
	if !a.host.Watcher {
		// Said once; the tray keeps running and the window is the way in
		// (a second launch opens it again).
		a.log.Warn("no tray icon can be shown: " + a.host.Why + "; opening the window instead")
	}

	a.startBackground(p)

	if !o.Hidden || !a.host.Watcher {
		a.openWindow()
	}
	if a.host.Bus {
		runMenu(a) // returns once ctx is done or Quit is chosen
	} else {
		<-a.ctx.Done()
	}

	a.log.Info("quitting: stopping the window, the HTTP server and background work")
	a.cancel()
	a.closeWindow()
	p.Drain(&a.wg)
	return nil
}

// goBG runs f on a goroutine owned by the app, stopped by its context.
func (a *App) goBG(f func(ctx context.Context)) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f(a.ctx)
	}()
}

// quit ends the tray.
func (a *App) quit() { a.cancel() }

// moveToApplications copies the app from its disk image or translocated
// copy to Applications and quits; the copy starts once this tray has let
// go of its lock (Run's end), and sets up the AI clients from there.
func (a *App) moveToApplications(context.Context) {
	dest, err := installplace.MoveToApplications(a.place)
	if err != nil {
		a.log.Error("move to Applications", "err", err)
		a.notify("MCP Sandbox could not move itself to Applications: " + err.Error() + ". Drag it there from the disk image instead.")
		return
	}
	a.log.Info("moved to Applications; starting the copy there", "bundle", dest)
	a.mu.Lock()
	a.relaunch = dest
	a.mu.Unlock()
	a.quit()
}

// syncAutostart makes the login entry agree with tray.autostart (the
// setting may have been changed by hand or in the window, or the binary
// moved).
func (a *App) syncAutostart() {
	want := a.cfg.Current().Tray.Autostart
	on, err := autostart.Enabled()
	if err != nil {
		a.log.Warn("read autostart", "err", err)
		return
	}
	if want || on != want {
		if err := autostart.Set(want, a.exe); err != nil {
			a.log.Warn("set autostart", "err", err)
		}
	}
}

// notify shows a desktop notification titled with the product's name,
// and logs it once it is shown (or why it was not).
func (a *App) notify(msg string) {
	if err := sendNotification("MCP Sandbox", msg); err != nil {
		a.log.Warn("notification not shown", "text", msg, "err", err)
		return
	}
	a.log.Info("notification", "text", msg)
}

// update changes the state and redraws the menu. Only a change the menu
// shows counts as work for the idle release: the tray's rechecks every
// 30 s find the same state, and a release (a collection and a read of
// smaps) after each was most of an idle tray's CPU.
func (a *App) update(f func(s *trayState)) {
	a.mu.Lock()
	f(&a.s)
	a.mu.Unlock()
	if a.redraw() {
		a.idle.Touch()
	}
}

// idleRelease is how long the tray is quiet after a change before it
// returns its free memory to the system: sandboxes come and go in bursts.
const idleRelease = 10 * time.Second

// menuState is the menu's view of the state.
func (a *App) menuState() traymenu.State {
	a.mu.Lock()
	defer a.mu.Unlock()
	cluster := a.s.cluster
	if a.s.detecting {
		cluster = engineconn.OnCluster(a.cfg.Current())
	}
	s := traymenu.State{
		DockerOK: a.s.dockerOK, Detecting: a.s.detecting, Engine: a.s.engine, Cluster: cluster,
		Sandboxes: a.s.sandboxes, Warm: a.s.warm, Paused: a.s.paused, Clients: a.s.clients,
		MoveOffered: a.place.Transient() && a.place.Bundle != "",
		HTTP:        a.cfg.Current().Tray.HTTPPort > 0,
		Failed:      a.s.failed,
		Questions:   menuQuestions(a.s.questions),
		Proposals:   a.s.proposals,
		Attention:   a.attention(a.s),
	}
	if a.offer != nil {
		s.Offer = a.offer.Version
	}
	return s
}

// redraw brings the menu, icon and title in line with the state, and
// writes tray.json for the window. It reports whether the menu changed
// (true before the menu exists).
func (a *App) redraw() bool {
	s := a.menuState()
	a.mu.Lock()
	m := a.menu
	a.mu.Unlock()
	changed := m == nil || m.draw(s)
	a.writeTrayFile()
	return changed
}

var errNoDocker = fmt.Errorf("%w: Docker is not reachable", dockerhost.ErrNoEngine)

// errNoCluster is errNoDocker on Kubernetes.
var errNoCluster = fmt.Errorf("%w: the Kubernetes cluster is not reachable", dockerhost.ErrNoEngine)

// startBackground starts the tray's background work: the second-launch
// listener, the config watcher, the engine loop, the state, audit and asks
// watchers, the updater, the HTTP server and autostart.
func (a *App) startBackground(p *startup.Process) {
	inst := p.Instance
	a.goBG(func(ctx context.Context) { inst.Serve(ctx, func() { a.openWindow() }) })
	a.goBG(func(ctx context.Context) { dirwatch.FollowConfig(ctx, a.cfg, config.Path(), a.log) })
	a.cfg.OnChange(func(c *config.Config) {
		a.applyHTTP()
		a.syncAutostart()
		a.updateSettingChanged(c)
		a.redraw()
	})
	a.cfg.OnChange(a.dockerHostChanged)
	a.goBG(a.engine.Run)
	a.goBG(a.watchStateDir)
	a.goBG(a.watchAudit)
	a.goBG(a.watchProposals)
	if a.host.Bus {
		a.goBG(a.listenAsks) // only where a menu can ask (asks.go)
	}
	a.goBG(a.updateLoop)
	a.applyHTTP()
	a.syncAutostart()
	a.goBG(func(context.Context) { a.refreshClients() })
}
