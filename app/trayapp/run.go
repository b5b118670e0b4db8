// Package trayapp is the MCP Sandbox tray application: it wires the window
// (app/ui), the tray menu (app/traymenu), the sandbox model
// (app/sandboxwatch), the HTTP server's supervisor, client set-up and the
// shared config and state together, and runs them until Quit.
//
//	func main() {
//		os.Exit(trayapp.Main(os.Args[1:]))
//	}
//
// Start-up: one instance per user (a second launch brings the first
// window forward); a rotated log in the state directory; the bundled
// mcp-sandbox found next to the executable; Docker detected; on first run
// Claude Desktop and Cursor configured when installed. Without a D-Bus
// session bus or a tray host it runs as a normal window instead.
package trayapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"

	"fyne.io/fyne/v2"
	fyneapp "fyne.io/fyne/v2/app"
	"fyne.io/fyne/v2/driver/desktop"

	"github.com/mcp-sandbox/mcp-sandbox/app/applog"
	"github.com/mcp-sandbox/mcp-sandbox/app/autostart"
	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/icons"
	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// AppID is the Fyne application id (preferences, notifications).
const AppID = "io.mcp-sandbox.tray"

// Options configures Run.
type Options struct {
	// Hidden starts in the background (the login entry passes it): the
	// window opens only when there is no tray to reach it from.
	Hidden bool
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
	fs := flag.NewFlagSet("mcp-sandbox-tray", flag.ContinueOnError)
	hidden := fs.Bool("hidden", false, "start in the background (used at login)")
	debug := fs.Bool("debug", false, "log debug messages, to stderr too")
	version := fs.Bool("version", false, "print the version and exit")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile to this file (to look into idle cost)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *cpuProfile != "" {
		f, err := os.Create(*cpuProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "mcp-sandbox-tray:", err)
			return 1
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			fmt.Fprintln(os.Stderr, "mcp-sandbox-tray:", err)
			return 1
		}
		defer pprof.StopCPUProfile()
	}
	if *version {
		fmt.Println("mcp-sandbox-tray " + buildinfo.Get().String())
		return 0
	}
	if why := noDisplay(os.Getenv); why != "" {
		fmt.Fprintln(os.Stderr, "mcp-sandbox-tray:", why)
		return 1
	}
	if err := Run(context.Background(), Options{Hidden: *hidden, Debug: *debug}); err != nil {
		fmt.Fprintln(os.Stderr, "mcp-sandbox-tray:", err)
		return 1
	}
	return 0
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

	fyne fyne.App
	desk desktop.App // nil when the tray is not used
	win  *ui.Window

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	server    bundled.Server
	serverErr error

	uiDown atomic.Bool // set once Fyne has stopped: nothing may call it

	mu sync.Mutex // guards what follows, written by background goroutines
	ui uiState

	docker    *dockerConn
	redetect  chan struct{}
	httpChild *httpChild
	audit     *auditWatch
}

// Run runs the tray until the user quits it or ctx is done. It returns nil
// at once when another instance is running (that one shows its window).
func Run(ctx context.Context, o Options) error {
	a := &App{o: o, getenv: o.Getenv, redetect: make(chan struct{}, 1)}
	if a.getenv == nil {
		a.getenv = os.Getenv
	}
	a.exe = o.Executable
	if a.exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return fmt.Errorf("find own executable: %w", err)
		}
		a.exe = exe
	}
	st, err := state.Open(config.StateDir())
	if err != nil {
		return err
	}
	a.st = st
	logw, err := applog.Open(filepath.Join(st.Dir(), "logs"), "tray", applog.Options{})
	if err != nil {
		return err
	}
	defer logw.Close()
	a.log = newLogger(logw, o.Debug)

	inst, err := instance.Acquire(st.Dir())
	if errors.Is(err, instance.ErrRunning) {
		a.log.Info("another tray is running; asked it to show its window")
		return nil
	}
	if err != nil {
		return err
	}
	defer inst.Close()
	a.log.Info("starting", "version", buildinfo.Get().String(), "pid", os.Getpid(), "log", logw.Path())

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
	a.ui.paused = st.Paused()
	a.ctx, a.cancel = context.WithCancel(ctx)
	defer a.cancel()

	a.fyne = fyneapp.NewWithID(AppID)
	a.fyne.SetIcon(icons.App())
	a.win = ui.New(a.fyne, ui.Options{Actions: a.actions(), OnViewChange: a.viewChanged, OnClose: a.windowClosed})
	a.win.Window().SetIcon(icons.App())
	host := a.setUpTray()
	if !o.Hidden || !host.Watcher {
		a.win.Show()
	}
	a.fyne.Lifecycle().SetOnStarted(func() {
		a.start(inst)
		if o.started != nil {
			o.started(a)
		}
	})
	// A caller's ctx ending quits the app like the Quit item does; once
	// Run returns, nothing may call into Fyne any more.
	stopWatch := context.AfterFunc(ctx, func() { fyne.Do(a.fyne.Quit) })
	a.fyne.Run()
	stopWatch()
	a.uiDown.Store(true)

	a.log.Info("quitting: stopping the HTTP server and background work")
	a.cancel()
	done := make(chan struct{})
	go func() { a.wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		a.log.Warn("background work did not stop in time")
	}
	a.log.Info("stopped")
	return nil
}

func newLogger(file io.Writer, debug bool) *slog.Logger {
	level := slog.LevelInfo
	out := file
	if debug {
		level = slog.LevelDebug
		out = io.MultiWriter(file, os.Stderr)
	}
	return slog.New(slog.NewTextHandler(out, &slog.HandlerOptions{Level: level}))
}

// start launches the background work, each piece owned by a.wg and
// stopped by a.ctx.
func (a *App) start(inst *instance.Instance) {
	a.goBG(func(ctx context.Context) {
		inst.Serve(ctx, func() { a.do(a.showWindow) })
	})
	a.goBG(a.cfg.Run)
	a.cfg.OnChange(func(*config.Config) { a.applyHTTP() })
	a.cfg.OnChange(a.dockerHostChanged)
	a.goBG(a.dockerLoop)
	a.applyHTTP()
	a.syncAutostart()
	a.goBG(func(context.Context) { a.refreshClients() })
	a.win.Settings.Reload()
	a.pushStatus()
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
	if !a.uiDown.Load() {
		fyne.Do(f)
	}
}

// quit ends the app; Run then stops the background work. UI goroutine
// only.
func (a *App) quit() {
	a.cancel()
	a.fyne.Quit()
}

func (a *App) showWindow() { a.win.Show() }

// windowClosed hides the window when a tray can bring it back, and quits
// otherwise.
func (a *App) windowClosed() {
	if a.desk != nil && probeTrayHost().Watcher {
		a.win.Hide()
		return
	}
	a.log.Info("window closed and no tray to reopen it from; quitting")
	a.quit()
}

// syncAutostart makes the login entry agree with tray.autostart (the
// setting may have been changed by hand, or the binary moved).
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

// notify shows a desktop notification.
func (a *App) notify(msg string) {
	a.log.Info("notification", "text", msg)
	a.fyne.SendNotification(fyne.NewNotification("MCP Sandbox", msg))
}
