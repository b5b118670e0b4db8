package startup

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/applog"
	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/buildinfo"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Flags are the command-line flags both programs take.
type Flags struct {
	// Debug logs debug messages, and logs to stderr too.
	Debug bool
	// Version prints the version and exits.
	Version bool
	// CPUProfile, when set, is a file to write a CPU profile to.
	CPUProfile string
}

// Register defines the flags in fs.
func (f *Flags) Register(fs *flag.FlagSet) {
	fs.BoolVar(&f.Debug, "debug", false, "log debug messages, to stderr too")
	fs.BoolVar(&f.Version, "version", false, "print the version and exit")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile to this file (to look into idle cost)")
}

// Start does what the flags ask for before the program runs, speaking as
// prog on stdout and stderr: it starts the CPU profile (the caller defers
// stop, which is never nil) and prints the version. When exit is true the
// program ends at once with code.
func (f *Flags) Start(prog string) (stop func(), code int, exit bool) {
	stop = func() {}
	if f.CPUProfile != "" {
		out, err := os.Create(f.CPUProfile)
		if err != nil {
			fmt.Fprintln(os.Stderr, prog+":", err)
			return stop, 1, true
		}
		if err := pprof.StartCPUProfile(out); err != nil {
			out.Close()
			fmt.Fprintln(os.Stderr, prog+":", err)
			return stop, 1, true
		}
		stop = func() {
			pprof.StopCPUProfile()
			out.Close()
		}
	}
	if f.Version {
		fmt.Println(prog + " " + buildinfo.Get().String())
		return stop, 0, true
	}
	return stop, 0, false
}

// Main runs run under a context that ends on an interrupt or SIGTERM
// (what a session manager sends at logout, and the tray sends its window
// when it quits) and returns the exit code: 0, or 1 with run's error on
// stderr, speaking as prog.
func Main(prog string, run func(ctx context.Context) error) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, prog+":", err)
		return 1
	}
	return 0
}

// Options configures Begin.
type Options struct {
	// Name is the log file's name below the state directory's logs
	// directory (NAME.log): "tray" or "window".
	Name string
	// LockDir is the directory of the single-instance lock, relative to
	// the state directory; "" is the state directory itself.
	LockDir string
	// Running is logged when another instance holds the lock (it has been
	// asked to come forward).
	Running string
	// Executable is the program's own path; "" means os.Executable.
	Executable string
	// Debug logs debug messages, and logs to stderr too.
	Debug bool
}

// Process is a started program: its path, state directory, logger and
// single-instance lock.
type Process struct {
	// Exe is the program's own path.
	Exe string
	// Store is the state directory.
	Store *state.Store
	// Log writes to the program's log file.
	Log *slog.Logger
	// Instance is the single-instance lock; it serves requests to come
	// forward once its Serve runs.
	Instance *instance.Instance

	logw *applog.Writer
}

// Begin finds the program's path, opens the state directory and the log
// file, and takes the single-instance lock. When another instance holds
// the lock, Begin logs o.Running, closes what it opened and returns an
// error that wraps instance.ErrRunning.
func Begin(o Options) (*Process, error) {
	p := &Process{Exe: o.Executable}
	if p.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find own executable: %w", err)
		}
		p.Exe = exe
	}
	st, err := state.Open(config.StateDir())
	if err != nil {
		return nil, err
	}
	p.Store = st
	p.logw, err = applog.Open(filepath.Join(st.Dir(), "logs"), o.Name, applog.Options{})
	if err != nil {
		return nil, err
	}
	p.Log = newLogger(p.logw, o.Debug)
	p.Instance, err = instance.Acquire(filepath.Join(st.Dir(), o.LockDir))
	if err != nil {
		if errors.Is(err, instance.ErrRunning) {
			p.Log.Info(o.Running)
		}
		p.logw.Close()
		return nil, err
	}
	p.Log.Info("starting", "version", buildinfo.Get().String(), "pid", os.Getpid(), "log", p.logw.Path())
	return p, nil
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

// Drain waits for the background work in wg to stop, at most 15 seconds,
// and logs that the program stopped.
func (p *Process) Drain(wg *sync.WaitGroup) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(15 * time.Second):
		p.Log.Warn("background work did not stop in time")
	}
	p.Log.Info("stopped")
}

// Close lets go of the single-instance lock (closing it again is
// harmless) and closes the log file.
func (p *Process) Close() {
	p.Instance.Close()
	p.logw.Close()
}
