//go:build cgo

package windowapp

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

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/icons"
	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/startup"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// AppID is the Fyne application id (preferences, notifications).
const AppID = "io.mcp-sandbox.tray"

// idleRelease is how long the window is quiet before it returns its free
// memory to the system: after a burst of clicks, not within one.
const idleRelease = 5 * time.Second

// Options configures Run.
type Options struct {
	// ConfirmPause asks at once whether to pause (the tray's menu opens
	// the window so when sandboxes would be removed).
	ConfirmPause bool
	// Tab is the tab to show first ("" means Status); Size, when set, the
	// window's size instead of the default.
	Tab  string
	Size fyne.Size
	// Details, when set, opens the details view of that sandbox at start.
	Details string
	// Debug logs debug messages, and logs to stderr too.
	Debug bool
	// Executable is the tray's own path, where the bundled server is
	// looked for; "" means os.Executable.
	Executable string
	// Getenv reads the environment; nil means os.Getenv.
	Getenv func(string) string

	// started, if set, is called on the UI goroutine once the app runs
	// (tests reach the running app through it).
	started func(*App)
}

// Main parses the command line, runs the tray, and returns the exit code.
// It must be called from the main goroutine.
func Main(args []string) int {
	fs := flag.NewFlagSet("mcp-sandbox-window", flag.ContinueOnError)
	confirmPause := fs.Bool("confirm-pause", false, "ask whether to pause (the tray's menu passes it)")
	tab := fs.String("tab", "", "the tab to show first: Status, Sandboxes, Clients, Settings, Activity or Changes")
	details := fs.String("details", "", "open the details view of this sandbox id at start")
	size := fs.String("size", "", "the window's size, WIDTHxHEIGHT (default 1120x700)")
	var common startup.Flags
	common.Register(fs)
	if err := fs.Parse(args); err != nil {
		return 2
	}
	stopProfile, code, exit := common.Start("mcp-sandbox-window")
	defer stopProfile()
	if exit {
		return code
	}
	if why := traywin.NoDisplay(os.Getenv); why != "" {
		fmt.Fprintln(os.Stderr, "mcp-sandbox-window:", why)
		return 1
	}
	o := Options{ConfirmPause: *confirmPause, Debug: common.Debug, Tab: *tab, Details: *details}
	if *size != "" {
		var w, h float32
		if _, err := fmt.Sscanf(*size, "%gx%g", &w, &h); err != nil || w < 100 || h < 100 {
			fmt.Fprintln(os.Stderr, "mcp-sandbox-window: --size wants WIDTHxHEIGHT, such as 800x560")
			return 2
		}
		o.Size = fyne.NewSize(w, h)
	}
	// SIGTERM (the tray quitting, a logout) closes the window like its
	// close button.
	return startup.Main("mcp-sandbox-window", func(ctx context.Context) error { return Run(ctx, o) })
}

// App is the running tray.
type App struct {
	o      Options
	log    *slog.Logger
	getenv func(string) string
	exe    string
	st     *state.Store
	cfg    *config.Watcher
	cfgErr error

	fyne     fyne.App
	win      *ui.Window
	headline string // the Status tab's headline last logged; UI goroutine only

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	server    bundled.Server
	serverErr error
	engine    *engineconn.Loop // follows the Docker engine

	// handoff counts the hand-offs to Fyne under way (do) and ends them before
	// Fyne stops: Fyne 2.7 checks that its loop still runs and then
	// queues, and a queueing that falls after its queue's close panics
	// (send on closed channel).
	handoff   handoffs
	bg        *background  // the app's windows have no focus (background.go)
	healthGen atomic.Int64 // the latest health check; older ones do not publish

	mu sync.Mutex // guards what follows, written by background goroutines
	ui uiState
	// serversShown is the list of servers last shown (servers.go).
	serversShown []ui.ServerRow

	audit *auditWatch
	// idle returns free memory to the system once the window is quiet
	// after some work (a tab shown, a new list).
	idle *startup.Releaser
}

// Run shows the window until it is closed or ctx is done. It returns nil
// at once when another window is open (that one comes forward).
func Run(ctx context.Context, o Options) error {
	a := &App{o: o, getenv: o.Getenv}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	p, err := startup.Begin(startup.Options{Name: "window", LockDir: "window", Running: "another window is open; asked it to come forward",
		Executable: o.Executable, Debug: o.Debug})
	if errors.Is(err, instance.ErrRunning) {
		return nil
	}
	if err != nil {
		return err
	}
	defer p.Close()
	a.exe, a.st, a.log = p.Exe, p.Store, p.Log

	a.cfg, a.cfgErr = config.NewWatcherOrDefaults(config.Path(), 2*time.Second, a.log)
	if a.cfgErr != nil {
		// Run on the defaults until the file is fixed (the watcher then
		// switches to it); the Settings tab shows why.
		a.log.Warn("config file invalid; using the defaults until it is fixed", "err", a.cfgErr)
	}
	a.server, a.serverErr = bundled.Find(a.exe)
	if a.serverErr != nil {
		a.log.Error("bundled server not found", "err", a.serverErr)
	} else {
		a.log.Info("bundled server", "path", a.server.Path, "found", a.server.Source)
	}
	a.engine = a.newEngineLoop()
	a.idle = startup.NewReleaser(idleRelease, a.releaseMapped, a.log)
	defer a.idle.Stop()
	a.ui.paused = a.st.Paused()
	a.ctx, a.cancel = context.WithCancel(ctx)
	defer a.cancel()

	a.fyne = newFyneApp()
	a.fyne.SetIcon(icons.App())
	a.win = ui.New(a.fyne, ui.Options{Actions: a.actions(), Do: a.do, OnViewChange: a.viewChanged, OnUsageSeen: a.usageSeen, OnClose: a.windowClosed})
	a.win.Window().SetIcon(icons.App())
	if o.Size.Width > 0 {
		a.win.Window().Resize(o.Size)
	}
	a.win.Show()
	a.bg = newBackground()
	a.fyne.Lifecycle().SetOnExitedForeground(func() { a.bg.set(true) })
	a.fyne.Lifecycle().SetOnEnteredForeground(func() { a.bg.set(false) })
	a.fyne.Lifecycle().SetOnStarted(func() {
		if o.Tab != "" {
			a.win.SelectTab(o.Tab)
		}
		a.start(p.Instance)
		if o.Details != "" {
			a.win.Sandboxes.OpenDetails(o.Details)
		}
		if o.started != nil {
			o.started(a)
		}
	})
	// A caller's ctx ending quits the app, as Fyne's own SIGTERM handler
	// does, through the driver's Quit: it touches no window and runs once,
	// so the two racing for one signal cannot close a window GLFW has
	// already let go (the app's Quit did, and panicked). Once Run returns,
	// nothing may call into Fyne any more.
	stopWatch := context.AfterFunc(ctx, func() {
		if a.handoff.close(true) {
			fyne.Do(a.fyne.Driver().Quit)
		}
	})
	a.fyne.Run()
	stopWatch()
	a.handoff.close(false)

	a.log.Info("window closed: stopping background work")
	a.cancel()
	p.Drain(&a.wg)
	return nil
}

// start launches the background work, each piece owned by a.wg and
// stopped by a.ctx.
func (a *App) start(inst *instance.Instance) {
	a.goBG(func(ctx context.Context) {
		inst.Serve(ctx, func() { a.do(a.showWindow) })
	})
	a.goBG(func(ctx context.Context) { dirwatch.FollowConfig(ctx, a.cfg, config.Path(), a.log) })
	a.cfg.OnChange(a.dockerHostChanged)
	a.goBG(a.engine.Run)
	a.goBG(a.watchStateDir)
	a.goBG(a.watchServers)
	a.goBG(a.watchProposals)
	a.goBG(func(context.Context) { a.refreshClients() })
	a.goBG(func(ctx context.Context) { a.bg.hold(ctx, func() { a.pauseDriver(ctx) }) })
	if a.o.ConfirmPause {
		a.confirmPause()
	}
	a.win.Settings.Reload()
	a.pushStatus()
	a.markSeen() // the window is open: the tray's badge has been seen
	a.idle.Touch()
}

// goBG runs f on a goroutine owned by the app, stopped by its context.
func (a *App) goBG(f func(ctx context.Context)) {
	a.wg.Add(1)
	go func() {
		defer a.wg.Done()
		f(a.ctx)
	}()
}

// do runs f on the UI goroutine, unless the UI has stopped (background
// work still ending after Quit must not touch it).
func (a *App) do(f func()) {
	if a.handoff.begin() {
		defer a.handoff.end()
		fyne.Do(f)
	}
}

// handoffs counts the calls of fyne.Do under way until it is closed.
type handoffs struct {
	mu   sync.Mutex
	down bool
	busy sync.WaitGroup // Add only under mu while !down, so never after close's Wait starts
}

// begin reports whether a hand-off may start; end must follow one that
// may.
func (h *handoffs) begin() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.down {
		h.busy.Add(1)
	}
	return !h.down
}

func (h *handoffs) end() { h.busy.Done() }

// close stops new hand-offs and, with wait, waits for those under way
// (before Fyne is told to stop; never from inside a hand-off, which Fyne
// runs in place once it has stopped). It reports whether this call closed
// them.
func (h *handoffs) close(wait bool) bool {
	h.mu.Lock()
	first := !h.down
	h.down = true
	h.mu.Unlock()
	if wait {
		h.busy.Wait()
	}
	return first
}

// newFyneApp makes the Fyne app without the hook Fyne 2.7 runs once it
// has stopped (it saves Fyne's preferences; the window keeps none). Fyne
// queues that hook as its loop stops, and the goroutine that runs it
// hands it back to the loop while the loop closes its queue: a send on a
// closed channel (a panic, seen in CI) or a wait for ever. With no hook
// nothing is queued.
func newFyneApp() fyne.App {
	fa := fyneapp.NewWithID(AppID)
	if l, ok := fa.Lifecycle().(interface{ SetOnStoppedHookExecuted(func()) }); ok {
		l.SetOnStoppedHookExecuted(nil)
	}
	return fa
}

// quit ends the app; Run then stops the background work. UI goroutine
// only.
func (a *App) quit() {
	a.cancel()
	// Hidden first: GLFW can deliver a pointer motion to a window Quit has
	// already destroyed, which Fyne 2.7 does not survive.
	a.win.Hide()
	a.handoff.close(true)
	a.fyne.Quit()
}

func (a *App) showWindow() { a.win.Show() }

// windowClosed ends the window process.
func (a *App) windowClosed() {
	a.log.Info("window closed")
	a.quit()
}

// confirmPause asks before pausing: pausing removes every sandbox,
// other clients' too. UI goroutine only.
func (a *App) confirmPause() {
	a.mu.Lock()
	n, httpOn := a.ui.snap.Count(), a.ui.http.Enabled
	a.mu.Unlock()
	ui.ConfirmPause(a.win.Window(), n, httpOn, func() {
		a.goBG(func(ctx context.Context) { a.setPaused(ctx, true) })
	})
}
