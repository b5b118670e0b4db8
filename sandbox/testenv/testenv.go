package testenv

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// Test images, built by .ci/setup-host (debootstrap + docker import, and
// FROM scratch + busybox-static). Override with the environment variables.
var (
	PythonImage = envOr("MCP_SANDBOX_TEST_PYTHON_IMAGE", "mcp-sandbox-test/python:3")
	PlotImage   = envOr("MCP_SANDBOX_TEST_PLOT_IMAGE", "mcp-sandbox-test/python-plot:3")
	NodeImage   = envOr("MCP_SANDBOX_TEST_NODE_IMAGE", "mcp-sandbox-test/node:18")
	TinyImage   = envOr("MCP_SANDBOX_TEST_TINY_IMAGE", "mcp-sandbox-test/busybox:1")
)

// Runtime is the OCI runtime every test sandbox runs under, from
// MCP_SANDBOX_TEST_RUNTIME: empty for the engine's default, or "runsc" to
// run the suite again under gVisor, as CI does. It is read when asked,
// not at package init, so that go test's cache sees the variable.
func Runtime() string { return os.Getenv("MCP_SANDBOX_TEST_RUNTIME") }

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// Missing skips the test, or fails it under CI=true, where every real
// component must be present.
func Missing(t testing.TB, what string) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s is required under CI=true (run .ci/setup-host)", what)
	}
	t.Skipf("skipping: %s (run .ci/setup-host to get it)", what)
}

// Docker returns a client for the local engine and checks the given images
// are present.
func Docker(t testing.TB, images ...string) *client.Client {
	t.Helper()
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		Missing(t, "a Docker client: "+err.Error())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		cli.Close()
		Missing(t, "a running Docker engine ("+err.Error()+")")
	}
	for _, img := range images {
		if _, err := cli.ImageInspect(ctx, img); err != nil {
			cli.Close()
			Missing(t, "test image "+img)
		}
	}
	t.Cleanup(func() { cli.Close() })
	return cli
}

// Config returns the default configuration with the test images in place
// of the official ones (no registry is reachable here), pull = never, and
// the runtime MCP_SANDBOX_TEST_RUNTIME asks for.
func Config(t testing.TB) *config.Config {
	t.Helper()
	c := config.Default()
	c.Source = "test-config.toml"
	c.Images.Python = PythonImage
	c.Images.JavaScript = NodeImage
	c.Images.Bash = PythonImage
	c.Images.Pull = "never"
	c.Pool.Size = 0
	c.Docker.Runtime = Runtime()
	return c
}

// WithRuntime returns the text of a config file with docker.runtime set to
// Runtime, for tests that write their own config file (and servers that
// read it); the text is unchanged when it is empty. A [docker] table
// already in the text gets the key, so the table is not defined twice.
func WithRuntime(toml string) string {
	if Runtime() == "" {
		return toml
	}
	key := fmt.Sprintf("runtime = %q\n", Runtime())
	lines := strings.SplitAfter(toml, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "[docker]" {
			if !strings.HasSuffix(l, "\n") {
				lines[i] += "\n"
			}
			lines[i] += key
			return strings.Join(lines, "")
		}
	}
	if toml != "" && !strings.HasSuffix(toml, "\n") {
		toml += "\n"
	}
	return toml + "\n[docker]\n" + key
}

// Logger returns a logger that writes to the test's log.
// Lines logged after the test ends are dropped.
func Logger(t testing.TB) *slog.Logger {
	w := &testWriter{t: t}
	t.Cleanup(func() { w.mu.Lock(); w.done = true; w.mu.Unlock() })
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct {
	t    testing.TB
	mu   sync.Mutex
	done bool
}

func (w *testWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.done {
		w.t.Log(strings.TrimSuffix(string(p), "\n"))
	}
	return len(p), nil
}

// Inspector returns the MCP Inspector's executable (npm package
// @modelcontextprotocol/inspector), from $MCP_INSPECTOR or where
// .ci/setup-host installs it.
func Inspector(t testing.TB) string {
	t.Helper()
	p := envOr("MCP_INSPECTOR", "/opt/mcp-inspector/node_modules/.bin/mcp-inspector")
	if _, err := os.Stat(p); err != nil {
		Missing(t, "the MCP Inspector CLI at "+p)
	}
	return p
}

// InspectorStrict returns a 2.x MCP Inspector, whose CLI has --strict (the
// 0.x one Inspector returns has not), from $MCP_INSPECTOR_STRICT or where
// .ci/setup-host installs it: a wrapper that runs it with the Node 22 it
// needs.
func InspectorStrict(t testing.TB) string {
	t.Helper()
	p := envOr("MCP_INSPECTOR_STRICT", "/opt/mcp-inspector-2/mcp-inspector")
	if _, err := os.Stat(p); err != nil {
		Missing(t, "the MCP Inspector CLI 2.x at "+p)
	}
	return p
}

// startHome is HOME when the test process started: builds run with it so
// the go command finds its caches even after a test has moved HOME.
var startHome = os.Getenv("HOME")

// WindowTags are the build tags mcp-sandbox-window ships with (packaging/lib.sh
// has the same): no_emoji leaves out Fyne's 4 MB colour emoji font, which
// the window never shows and Fyne parses again for every text style it
// draws (about 18 MB of heap).
const WindowTags = "no_emoji"

// Build builds this module's command ./cmd/<name> into dir and returns the
// binary's path. mcp-sandbox is built with CGO_ENABLED=0, the window with
// WindowTags, and every binary without its symbol table and DWARF
// (-ldflags "-s -w"), as they ship: that also makes the link, most of a
// cached build, faster.
func Build(dir, name string) (string, error) {
	bin := filepath.Join(dir, name)
	args := []string{"build", "-ldflags=-s -w", "-o", bin}
	if name == "mcp-sandbox-window" {
		args = append(args, "-tags", WindowTags)
	}
	cmd := exec.Command("go", append(args, "github.com/mcp-sandbox/mcp-sandbox/cmd/"+name)...)
	cmd.Env = append(os.Environ(), "HOME="+startHome)
	if name == "mcp-sandbox" {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build ./cmd/%s: %v\n%s", name, err, out)
	}
	return bin, nil
}

// AheadShellsScript is a /bin/sh script that prints the pids of the
// shells a sandbox's command agent started ahead for the next command
// (its pattern is split so that the script's own command line does not
// match).
const AheadShellsScript = `p='read -r __''c <&3'; for d in /proc/[0-9]*; do case $(tr '\0' ' ' < $d/cmdline 2>/dev/null) in *"$p"*) echo ${d#/proc/};; esac; done`
