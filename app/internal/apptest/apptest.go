package apptest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// Test images and the skip-or-fail rule come from sandbox/testenv, which
// the engine's tests use too.
var (
	PythonImage = testenv.PythonImage
	TinyImage   = testenv.TinyImage
	NodeImage   = testenv.NodeImage
)

// CI reports whether the tests run under CI=true.
func CI() bool { return os.Getenv("CI") == "true" }

// Missing skips the test, or fails it under CI=true.
func Missing(t testing.TB, what string) {
	t.Helper()
	testenv.Missing(t, what)
}

// Docker returns a client for the local engine after checking that it
// answers and that the images are present.
func Docker(t testing.TB, images ...string) *client.Client {
	t.Helper()
	return testenv.Docker(t, images...)
}

// ConfigTOML is a config file for the test images, which cannot be pulled:
// every language can run (the window's headline says Running only then).
func ConfigTOML() string {
	return `[images]
python = "` + PythonImage + `"
javascript = "` + NodeImage + `"
bash = "` + PythonImage + `"
pull = "never"

[pool]
size = 0
`
}

// WriteHome puts the test config (ConfigTOML plus extra) in its standard
// place under home.
func WriteHome(home, extra string) error {
	cfg := filepath.Join(home, ".config", "mcp-sandbox", "config.toml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		return err
	}
	return os.WriteFile(cfg, []byte(ConfigTOML()+extra), 0o600)
}

// Sandboxes lists the ids of the managed, non-pool sandboxes on the
// engine, whichever process made them.
func Sandboxes(ctx context.Context, cli *client.Client) ([]string, error) {
	return sandboxesWith(ctx, cli, "io.mcp-sandbox.managed=true")
}

// InstallationSandboxes lists the ids of the managed, non-pool sandboxes
// of the installation that made sandbox id (its io.mcp-sandbox.installation
// label): what the tray of that installation counts.
func InstallationSandboxes(ctx context.Context, cli *client.Client, id string) ([]string, error) {
	ins, err := cli.ContainerInspect(ctx, "mcp-sandbox-"+id)
	if err != nil {
		return nil, err
	}
	inst := ins.Config.Labels["io.mcp-sandbox.installation"]
	if inst == "" {
		return nil, fmt.Errorf("sandbox %s has no installation label", id)
	}
	return sandboxesWith(ctx, cli, "io.mcp-sandbox.installation="+inst)
}

func sandboxesWith(ctx context.Context, cli *client.Client, label string) ([]string, error) {
	f := filters.NewArgs(filters.Arg("label", "io.mcp-sandbox.managed=true"), filters.Arg("label", label))
	list, err := cli.ContainerList(ctx, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, c := range list {
		if c.Labels["io.mcp-sandbox.pool"] == "true" && len(c.Names) > 0 && strings.HasPrefix(c.Names[0], "/mcp-sandbox-pool-") {
			continue
		}
		if c.Labels["io.mcp-sandbox.helper"] != "" {
			continue // an install helper or a doctor's probe, not a sandbox
		}
		ids = append(ids, c.Labels["io.mcp-sandbox.id"])
	}
	return ids, nil
}

// Home makes a temporary home directory with the test config in its
// standard place, points HOME (and the XDG variables) at it, and returns it:
// the tray and every server it starts then share that config and state.
func Home(t testing.TB) string {
	t.Helper()
	home := t.TempDir()
	for _, k := range []string{"XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME", "MCP_SANDBOX_CONFIG", "MCP_SANDBOX_STATE_DIR"} {
		t.Setenv(k, "")
		os.Unsetenv(k)
	}
	t.Setenv("HOME", home)
	if err := WriteHome(home, ""); err != nil {
		t.Fatal(err)
	}
	return home
}

// Binary builds ./cmd/NAME of this module once per test process and
// returns its path (clitest.Binary, shared with the server's tests).
func Binary(t testing.TB, name string) string {
	t.Helper()
	return clitest.Binary(t, name)
}

// BuildBinary is Binary for TestMain, which has no testing.TB.
func BuildBinary(name string) (string, error) { return clitest.BuildBinary(name) }

// Cleanup removes the binaries Binary built; call it from TestMain.
func Cleanup() { clitest.Cleanup() }

// StartXvfb starts a private X server when the process has no DISPLAY and
// Xvfb is installed, sets DISPLAY for this process (and its children), and
// returns a function that stops it. With a DISPLAY already set, or without
// Xvfb, it does nothing (the GUI tests then skip, or fail under CI=true).
// A server that does not accept a connection is started again, up to
// three times.
func StartXvfb() (stop func(), err error) {
	if os.Getenv("DISPLAY") != "" {
		return func() {}, nil
	}
	if _, err := exec.LookPath("Xvfb"); err != nil {
		return func() {}, nil
	}
	display, stopX, err := NewXvfb()
	if err != nil {
		return func() {}, err
	}
	os.Setenv("DISPLAY", display)
	return func() {
		stopX()
		os.Unsetenv("DISPLAY")
	}, nil
}

// NewXvfb starts a private X server on a display Xvfb picks itself
// (-displayfd, so two servers started at once never race for one number)
// and returns its DISPLAY value and a function that stops it. It does not
// change this process's environment. A server that does not accept a
// connection is started again, up to three times.
func NewXvfb() (display string, stop func(), err error) {
	xvfb, err := exec.LookPath("Xvfb")
	if err != nil {
		return "", nil, fmt.Errorf("Xvfb is not installed (apt-get install xvfb): %w", err)
	}
	for attempt := 1; ; attempt++ {
		display, stop, err := startXvfb(xvfb)
		if err == nil || attempt == 3 {
			return display, stop, err
		}
		fmt.Fprintf(os.Stderr, "apptest: Xvfb attempt %d: %v; trying again\n", attempt, err)
	}
}

func startXvfb(xvfb string) (string, func(), error) {
	r, w, err := os.Pipe()
	if err != nil {
		return "", nil, err
	}
	var stderr clitest.Buffer
	// -displayfd makes Xvfb pick a free display and write its number.
	// -noreset: an X server resets when its last client leaves, and
	// refuses connections meanwhile; the readiness probe below is such a
	// client, and a window opening right after it failed with "Failed to
	// open display".
	cmd := exec.Command(xvfb, "-displayfd", "3", "-noreset", "-screen", "0", "1280x1024x24", "-nolisten", "tcp")
	cmd.ExtraFiles = []*os.File{w}
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return "", nil, fmt.Errorf("start Xvfb: %w", err)
	}
	w.Close()
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	kill := func() {
		cmd.Process.Kill()
		<-exited
	}
	// Xvfb writes the number and the newline in two writes, and dies
	// (FatalError: "Cannot write display number") when the pipe is closed
	// between them: read up to the newline.
	num := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(r).ReadString('\n')
		num <- strings.TrimSpace(line)
	}()
	var d string
	select {
	case d = <-num:
		r.Close()
	case <-time.After(20 * time.Second):
		kill()
		return "", nil, fmt.Errorf("Xvfb did not start within 20s")
	}
	if d == "" {
		kill()
		return "", nil, fmt.Errorf("Xvfb did not report its display: %s", stderr.String())
	}
	if err := waitX(d, exited); err != nil {
		kill()
		return "", nil, fmt.Errorf("%w: %s", err, stderr.String())
	}
	return ":" + d, func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(5 * time.Second):
			kill()
		}
	}, nil
}

// waitX waits until an X client gets through its handshake with display
// :d, for at most 10 s or until the server exits (exited closed).
// xdpyinfo does what a window's client library does (the abstract socket
// first, then the path), so a display number that a server still shutting
// down holds on to is waited out, not handed on. Without xdpyinfo, a
// connection to the socket's path is taken as ready.
func waitX(d string, exited <-chan struct{}) error {
	xdpyinfo, _ := exec.LookPath("xdpyinfo")
	deadline := time.Now().Add(10 * time.Second)
	for {
		err := probeX(xdpyinfo, d)
		if err == nil {
			return nil
		}
		select {
		case <-exited:
			return fmt.Errorf("Xvfb on :%s exited", d)
		default:
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("Xvfb on :%s takes no connection: %v", d, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// probeX connects to display :d once: with xdpyinfo when there is one
// (its path, or ""), else to the display's socket.
func probeX(xdpyinfo, d string) error {
	if xdpyinfo != "" {
		out, err := exec.Command(xdpyinfo, "-display", ":"+d).CombinedOutput()
		if err != nil {
			return fmt.Errorf("%v: %s", err, bytes.TrimSpace(out))
		}
		return nil
	}
	c, err := net.Dial("unix", "/tmp/.X11-unix/X"+d)
	if err != nil {
		return err
	}
	return c.Close()
}
