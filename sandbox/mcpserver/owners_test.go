package mcpserver_test

// Owners proved alive or dead, and your sandboxes, not the engine's, on
// the real engine with the real binary: another server's start-up reaping
// (in another PID namespace, with this state directory or another) and
// another installation's `stop --all` leave a live server's sandbox
// alone.

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/internal/clitest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// unsharePID is the prefix that runs a command in a new PID namespace
// (with its own /proc), or the test skips (fails in CI) where it cannot.
func unsharePID(t *testing.T) []string {
	t.Helper()
	argv := []string{"unshare", "--pid", "--fork", "--kill-child", "--mount-proc"}
	if out, err := exec.Command(argv[0], append(argv[1:], "true")...).CombinedOutput(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("unshare: %v: %s", err, out)
		}
		t.Skipf("no PID namespaces here (unshare: %v: %s)", err, out)
	}
	return argv
}

// withStateDir returns env with another state directory.
func withStateDir(t *testing.T, env []string) []string {
	return setEnv(env, "MCP_SANDBOX_STATE_DIR", filepath.Join(t.TempDir(), "state"))
}

// checkAlive fails unless sandbox id's container runs and the sandbox
// answers a command through its server's session.
func checkAlive(t *testing.T, cli *client.Client, sess *mcp.ClientSession, id string) {
	t.Helper()
	ins, err := cli.ContainerInspect(context.Background(), backend.ContainerName(id))
	if err != nil {
		t.Fatalf("sandbox %s: %v", id, err)
	}
	if !ins.State.Running {
		t.Fatalf("sandbox %s: container %s", id, ins.State.Status)
	}
	res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": id, "command": "echo alive"})
	var out struct {
		Stdout string `json:"stdout"`
	}
	structured(t, res, &out)
	if res.IsError || out.Stdout != "alive\n" {
		t.Fatalf("sandbox %s after the other server: %s", id, text(res))
	}
}

// TestReapSparesLiveServerOtherPIDNamespace: a server started in another
// PID namespace, with this state directory (the same installation) and
// with another one (another installation), runs its start-up reaping and
// leaves the live first server's sandbox running and working. Before, the
// reaper judged the owner by kill(pid, 0) in its own namespace and removed
// it.
func TestReapSparesLiveServerOtherPIDNamespace(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	unshare := unsharePID(t)
	env := serverEnv(t, "")
	a := startServer(t, env)
	sess := sdkClient(t, a, nil)
	id := createSandboxes(t, sess, 1)[0]
	for _, tt := range []struct {
		name string
		env  []string
	}{
		{"same state directory", env},
		{"another state directory", withStateDir(t, env)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := startServerCmd(t, tt.env, append(unshare, serverBin(t), "serve", "--debug"))
			waitLogged(t, b, "start-up reaping done", 60*time.Second)
			checkAlive(t, cli, sess, id)
		})
	}
}

// TestStopAllFromAnotherInstallation: `mcp-sandbox stop --all` of another
// installation (another state directory) on the same engine stops nothing
// of this one's, says it left others', and --all-users without a terminal
// or --yes refuses; `ps` there does not list it, `ps --all` marks it as
// another's, and `stop ID` refuses it. This installation's own `stop
// --all` stops it.
func TestStopAllFromAnotherInstallation(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	env := serverEnv(t, "")
	a := startServer(t, env)
	sess := sdkClient(t, a, nil)
	id := createSandboxes(t, sess, 1)[0]
	other := withStateDir(t, env)
	run := func(env []string, args ...string) (int, string, string) {
		t.Helper()
		return clitest.Run(t, serverBin(t), env, args...)
	}

	code, out, errOut := run(other, "stop", "--all")
	if code != 0 || strings.Contains(out, id) || !strings.Contains(errOut, "sandboxes of other installations") {
		t.Errorf("stop --all of another installation: %d %q %q", code, out, errOut)
	}
	code, out, errOut = run(other, "stop", "--all", "--all-users")
	if code != 1 || strings.Contains(out, id) || !strings.Contains(errOut, "needs a confirmation") {
		t.Errorf("stop --all --all-users without a terminal or --yes: %d %q %q", code, out, errOut)
	}
	code, _, errOut = run(other, "stop", id)
	if code != 1 || !strings.Contains(errOut, "--all-users") {
		t.Errorf("stop %s of another installation: %d %q", id, code, errOut)
	}
	checkAlive(t, cli, sess, id)

	if _, out, _ = run(other, "ps"); strings.Contains(out, id) {
		t.Errorf("ps of another installation lists this one's sandbox:\n%s", out)
	}
	_, out, _ = run(other, "ps", "--all")
	if line := lineWith(out, id); !strings.Contains(line, "other's") {
		t.Errorf("ps --all of another installation does not mark the sandbox as another's:\n%s", out)
	}
	_, out, _ = run(env, "ps", "--all")
	if line := lineWith(out, id); !strings.HasSuffix(strings.TrimSpace(line), "this") {
		t.Errorf("ps --all of this installation does not mark its sandbox as its own:\n%s", out)
	}

	code, out, _ = run(env, "stop", "--all")
	if code != 0 || !strings.Contains(out, "stopped "+id) {
		t.Errorf("stop --all of this installation: %d %q", code, out)
	}
	waitGone(t, cli, []string{id}, 15*time.Second)
}

func lineWith(out, s string) string {
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, s) {
			return l
		}
	}
	return ""
}

// TestHostileClientNameIsCleaned: an MCP client that calls itself by a
// terminal escape and a newline gets a cleaned name in its sandbox's label,
// and `ps` prints one row for its sandbox, with no escape.
func TestHostileClientNameIsCleaned(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	env := serverEnv(t, "")
	p := startServer(t, env)
	const name = "evil\x1b[2J\x1b]0;pwned\x07\nabc123  forged  row\u202e"
	c := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1.0"}, nil)
	sess, err := c.Connect(testContext(t, 30*time.Second), &mcp.IOTransport{Reader: p.stdout, Writer: p.stdin}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	id := createSandboxes(t, sess, 1)[0]
	ins, err := cli.ContainerInspect(context.Background(), backend.ContainerName(id))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := ins.Config.Labels[backend.LabelClient], "evil[2J]0;pwnedabc123  forged  row"; got != want {
		t.Errorf("client label %q, want %q", got, want)
	}
	cmd := exec.Command(serverBin(t), "ps")
	cmd.Env = env
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != 2 || strings.ContainsAny(string(out), "\x1b\x07\u202e") {
		t.Errorf("ps printed %d lines (want a header and one row), or an escape:\n%q", len(lines), out)
	}
}
