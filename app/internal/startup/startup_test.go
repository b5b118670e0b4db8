package startup

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/instance"
)

// A second Begin under the same lock finds the first, asks it to come
// forward and says so in the same log file; one under another lock
// directory (the window beside the tray) runs alongside.
func TestBeginOneInstance(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("MCP_SANDBOX_STATE_DIR", dir)
	first, err := Begin(Options{Name: "tray", Running: "another tray is running", Executable: "/opt/tray"})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	if first.Exe != "/opt/tray" || first.Store.Dir() != dir {
		t.Errorf("Exe %q, state dir %q; want /opt/tray and %s", first.Exe, first.Store.Dir(), dir)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var served sync.WaitGroup
	asked := make(chan struct{}, 1)
	served.Add(1)
	go func() {
		defer served.Done()
		first.Instance.Serve(ctx, func() { asked <- struct{}{} })
	}()
	defer func() { cancel(); served.Wait() }()

	if _, err := Begin(Options{Name: "tray", Running: "another tray is running"}); !errors.Is(err, instance.ErrRunning) {
		t.Fatalf("second Begin: %v, want instance.ErrRunning", err)
	}
	select {
	case <-asked:
	default:
		t.Error("the first instance was not asked to come forward")
	}
	window, err := Begin(Options{Name: "window", LockDir: "window", Running: "another window is open"})
	if err != nil {
		t.Fatalf("a window beside the tray: %v", err)
	}
	window.Log.Info("window line")
	window.Close()
	window.Close() // harmless twice
	first.Log.Info("tray line")

	logs := filepath.Join(dir, "logs")
	tray, _ := os.ReadFile(filepath.Join(logs, "tray.log"))
	if n := strings.Count(string(tray), "msg=starting"); n != 1 || !strings.Contains(string(tray), "another tray is running") || !strings.Contains(string(tray), "tray line") {
		t.Errorf("tray.log (%d starts):\n%s", n, tray)
	}
	win, _ := os.ReadFile(filepath.Join(logs, "window.log"))
	if !strings.Contains(string(win), "msg=starting") || !strings.Contains(string(win), "window line") || strings.Contains(string(win), "tray line") {
		t.Errorf("window.log:\n%s", win)
	}
}

func TestDrainLogsStopped(t *testing.T) {
	t.Setenv("MCP_SANDBOX_STATE_DIR", t.TempDir())
	p, err := Begin(Options{Name: "tray"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	ran := false
	wg.Add(1)
	go func() { defer wg.Done(); ran = true }()
	p.Drain(&wg)
	p.Close()
	if !ran {
		t.Error("Drain returned before the background work ended")
	}
	b, _ := os.ReadFile(filepath.Join(p.Store.Dir(), "logs", "tray.log"))
	if !strings.Contains(string(b), "msg=stopped") {
		t.Errorf("tray.log does not say it stopped:\n%s", b)
	}
}

// --version prints and exits 0; a CPU profile that cannot be written
// fails loudly with exit code 1.
func TestFlagsStart(t *testing.T) {
	f := Flags{CPUProfile: filepath.Join(t.TempDir(), "no-such-dir", "cpu.prof")}
	stop, code, exit := f.Start("mcp-sandbox-test")
	stop()
	if !exit || code != 1 {
		t.Errorf("unwritable profile: exit %v code %d, want exit with 1", exit, code)
	}
	prof := filepath.Join(t.TempDir(), "cpu.prof")
	f = Flags{CPUProfile: prof}
	stop, code, exit = f.Start("mcp-sandbox-test")
	if exit || code != 0 {
		t.Errorf("profile: exit %v code %d, want to run on", exit, code)
	}
	stop()
	if st, err := os.Stat(prof); err != nil || st.Size() == 0 {
		t.Errorf("profile %s not written: %v", prof, err)
	}
	f = Flags{Version: true}
	stop, code, exit = f.Start("mcp-sandbox-test")
	stop()
	if !exit || code != 0 {
		t.Errorf("--version: exit %v code %d, want exit with 0", exit, code)
	}
}

// Main's exit code is run's outcome, and run's context is live while it
// runs.
func TestMainExitCode(t *testing.T) {
	if code := Main("mcp-sandbox-test", func(ctx context.Context) error { return ctx.Err() }); code != 0 {
		t.Errorf("a run that ends well: exit %d, want 0", code)
	}
	if code := Main("mcp-sandbox-test", func(context.Context) error { return errors.New("no state directory") }); code != 1 {
		t.Errorf("a run that fails: exit %d, want 1", code)
	}
}
