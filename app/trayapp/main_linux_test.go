package trayapp

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
)

// The GUI tests run the real tray in this test process, against a private
// dbus-daemon and the real Docker engine, under an X server (the one in
// DISPLAY, else a private Xvfb started here):
// Fyne runs only once per process and only on the main goroutine, so
// TestMain runs the app there and the tests on another goroutine. Tests
// that need it call needGUI, which skips (or fails under CI=true) when the
// display, the bus or the set-up is missing.
var gui struct {
	skip   string // why the GUI tests cannot run; "" when they can
	app    *App
	bus    *privateBus
	watch  *watcher
	notes  *notifier
	home   string
	server string // the bundled mcp-sandbox
	port   int    // tray.http_port
	// claudeBefore is Claude Desktop's config before the tray first ran.
	claudeBefore string
}

func TestMain(m *testing.M) {
	flag.Parse()
	// Without a display (plain `go test`), start a private X server.
	stopX, err := apptest.StartXvfb()
	if err != nil {
		fmt.Fprintln(os.Stderr, "trayapp tests:", err)
		stopX = func() {}
	}
	code := runGUI(m)
	stopX()
	apptest.Cleanup()
	os.Exit(code)
}

// skipUnderRace skips a test in the -race run of this package: the
// in-process tray cannot run there (see race_on_linux_test.go), and the
// tests of the tray binary run in the README's second command, without
// -race, so they are not run twice.
func skipUnderRace(t *testing.T) {
	t.Helper()
	if raceDetector {
		t.Skip("skipping under -race: fyne.io/systray's menu has a data race of its own (see race_on_linux_test.go); `go test -p 1 ./app/trayapp` runs this")
	}
}

func needGUI(t *testing.T) *App {
	t.Helper()
	skipUnderRace(t)
	if gui.skip != "" {
		apptest.Missing(t, "the tray's GUI: "+gui.skip)
	}
	return gui.app
}

// runGUI starts the tray on the main goroutine, runs the tests beside it,
// then quits the tray from its menu and checks it stopped its HTTP child.
func runGUI(m *testing.M) int {
	if raceDetector {
		return m.Run() // the in-process tray is not started under -race
	}
	if why := haveDisplayAndBus(); why != "" {
		gui.skip = why
		return m.Run()
	}
	if err := setUpGUI(); err != nil {
		gui.skip = "set-up failed: " + err.Error()
		return m.Run()
	}
	defer gui.bus.stop()
	defer os.RemoveAll(gui.home)

	started := make(chan *App, 1)
	code := 0
	httpPID := 0
	testsDone := make(chan struct{})
	go func() {
		defer close(testsDone)
		select {
		case a := <-started:
			gui.app = a
		case <-time.After(2 * time.Minute):
			gui.skip = "the tray did not start within 2 minutes"
		}
		code = m.Run()
		if gui.app != nil {
			httpPID = gui.app.httpPID()
			if err := quitFromTray(); err != nil {
				fmt.Fprintln(os.Stderr, "FAIL: quit from the tray menu:", err)
				code = 1
				gui.app.do(gui.app.quit)
			}
		}
	}()
	err := Run(context.Background(), Options{
		Executable: filepath.Join(gui.home, "bin", "mcp-sandbox-tray"),
		started:    func(a *App) { started <- a },
	})
	<-testsDone
	if err != nil {
		fmt.Fprintln(os.Stderr, "FAIL: Run:", err)
		return 1
	}
	if httpPID > 0 {
		if err := syscall.Kill(httpPID, 0); !errors.Is(err, syscall.ESRCH) {
			fmt.Fprintf(os.Stderr, "FAIL: the HTTP server (pid %d) still runs after Quit\n", httpPID)
			return 1
		}
	}
	return code
}

// setUpGUI makes a home with the test config (an HTTP port set) and an
// installed Claude Desktop, puts the freshly built server where a package
// puts it, and starts the private bus with a tray host and a notification
// daemon on it.
func setUpGUI() error {
	server, err := apptest.BuildBinary("mcp-sandbox")
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "mcp-sandbox-tray-test-")
	if err != nil {
		return err
	}
	gui.home = home
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "XDG_DATA_HOME", "MCP_SANDBOX_CONFIG", "MCP_SANDBOX_STATE_DIR", "MCP_SANDBOX_TOKEN"} {
		os.Unsetenv(k)
	}
	os.Setenv("HOME", home)
	if gui.port, err = freePort(); err != nil {
		return err
	}
	if err := apptest.WriteHome(home, fmt.Sprintf("\n# the tray's own HTTP server\n[tray]\nhttp_port = %d\n", gui.port)); err != nil {
		return err
	}
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	gui.claudeBefore = "{\n  \"mcpServers\": {},\n  \"globalShortcut\": \"\"\n}\n"
	if err := os.MkdirAll(filepath.Dir(claude), 0o700); err != nil {
		return err
	}
	if err := os.WriteFile(claude, []byte(gui.claudeBefore), 0o600); err != nil {
		return err
	}
	bin := filepath.Join(home, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		return err
	}
	gui.server = filepath.Join(bin, "mcp-sandbox")
	data, err := os.ReadFile(server)
	if err != nil {
		return err
	}
	if err := os.WriteFile(gui.server, data, 0o755); err != nil {
		return err
	}
	if gui.bus, err = startBus(); err != nil {
		return err
	}
	os.Setenv("DBUS_SESSION_BUS_ADDRESS", gui.bus.addr)
	if gui.watch, err = startWatcher(gui.bus.addr); err != nil {
		gui.bus.stop()
		return err
	}
	if gui.notes, err = startNotifier(gui.bus.addr); err != nil {
		gui.bus.stop()
		return err
	}
	return nil
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

// quitFromTray clicks Quit in the tray menu, as a person would.
func quitFromTray() error {
	m, err := openTrayMenu(gui.bus.addr, os.Getpid())
	if err != nil {
		return err
	}
	items, err := m.layout()
	if err != nil {
		return err
	}
	q, ok := find(items, "Quit")
	if !ok {
		return fmt.Errorf("no Quit item in\n%s", outline(items, ""))
	}
	return m.click(q.ID)
}

// httpPID is the HTTP child's process id, or 0.
func (a *App) httpPID() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.httpChild == nil {
		return 0
	}
	return a.httpChild.sup.Status().PID
}
