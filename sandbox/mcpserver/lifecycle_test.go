package mcpserver_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

func createSandboxes(t *testing.T, sess *mcp.ClientSession, n int) []string {
	t.Helper()
	var ids []string
	for i := 0; i < n; i++ {
		res := call(t, sess, "sandbox_create", nil)
		if res.IsError {
			t.Fatalf("create: %s", text(res))
		}
		var c struct {
			SandboxID string `json:"sandbox_id"`
		}
		structured(t, res, &c)
		ids = append(ids, c.SandboxID)
	}
	return ids
}

// waitGone waits until none of the sandboxes' containers and workspace
// volumes exist.
func waitGone(t *testing.T, cli *client.Client, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		left := 0
		for _, id := range ids {
			if _, err := cli.ContainerInspect(context.Background(), backend.ContainerName(id)); err == nil {
				left++
			}
		}
		// The volumes go after the container: wait for them as well.
		vols, err := cli.VolumeList(context.Background(), volumeFilter(ids))
		if err != nil {
			t.Fatal(err)
		}
		if left == 0 && len(vols.Volumes) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d sandboxes (%d workspace volumes) still exist after %v", left, len(ids), len(vols.Volumes), within)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStdinCloseRemovesSandboxes: when the client goes away, the server
// removes its sandboxes (and their workspace volumes) and exits.
func TestStdinCloseRemovesSandboxes(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	ids := createSandboxes(t, sess, 2)
	start := time.Now()
	p.stdin.Close()
	waitGone(t, cli, ids, 15*time.Second)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("server exit: %v", err)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("server did not exit after stdin closed")
	}
	t.Logf("sandboxes removed and server exited %v after stdin closed", time.Since(start).Round(time.Millisecond))
	vols, err := cli.VolumeList(context.Background(), volumeFilter(ids))
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Volumes) > 0 {
		t.Errorf("workspace volumes left behind: %d", len(vols.Volumes))
	}
}

func volumeFilter(ids []string) volume.ListOptions {
	f := filters.NewArgs()
	for _, id := range ids {
		f.Add("label", backend.LabelID+"="+id)
	}
	return volume.ListOptions{Filters: f}
}

// TestSIGTERMRemovesSandboxes: a client that terminates the server instead
// of closing stdin gets the same clean-up.
func TestSIGTERMRemovesSandboxes(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	ids := createSandboxes(t, sess, 1)
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitGone(t, cli, ids, 15*time.Second)
}

// TestKilledServerSandboxesReaped: a server SIGKILLed together with its
// watchdog (as a kill of their whole cgroup would) cannot clean up; the
// next server to start removes what it left, because its owner process is
// gone.
func TestKilledServerSandboxesReaped(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	env := serverEnv(t, "")
	a := startServer(t, env)
	ids := createSandboxes(t, sdkClient(t, a, nil), 2)
	killWithWatchdog(t, a)
	a.cmd.Wait()
	for _, id := range ids {
		if _, err := cli.ContainerInspect(context.Background(), backend.ContainerName(id)); err != nil {
			t.Fatalf("sandbox %s vanished with its server; the test cannot show reaping: %v", id, err)
		}
	}
	b := startServer(t, env)
	sdkClient(t, b, nil)
	waitGone(t, cli, ids, 20*time.Second)
}

// TestInspectorCLI drives the real binary with the MCP Inspector's CLI, an
// independent client written in TypeScript.
func TestInspectorCLI(t *testing.T) {
	testenv.Docker(t, testenv.PythonImage)
	bin := testenv.Inspector(t)
	srv := serverBin(t) // built before the clock starts
	env := serverEnv(t, "")
	run := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, append([]string{"--cli", srv, "serve"}, args...)...)
		cmd.Env = env
		cmd.Dir = filepath.Dir(bin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("inspector %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	out := run("--method", "tools/list")
	for _, name := range []string{"sandbox_create", "sandbox_exec", "run_code", "sandbox_list", "sandbox_stop"} {
		if !strings.Contains(out, `"name": "`+name+`"`) {
			t.Errorf("tools/list lacks %s:\n%s", name, out)
		}
	}
	out = run("--method", "tools/call", "--tool-name", "run_code", "--tool-arg", "code=print(6*7)")
	if !strings.Contains(out, `--- stdout\n42\n`) {
		t.Errorf("run_code via inspector:\n%s", out)
	}
	out = run("--method", "tools/call", "--tool-name", "sandbox_exec", "--tool-arg", "sandbox_id=nosuchbox1", "--tool-arg", "command=ls")
	if !strings.Contains(out, `"isError": true`) {
		t.Errorf("unknown sandbox via inspector:\n%s", out)
	}
	out = run("--method", "resources/templates/list")
	if !strings.Contains(out, "sandbox://{id}/logs") {
		t.Errorf("templates:\n%s", out)
	}
}

var watchdogPIDRe = regexp.MustCompile(`watchdog_pid=(\d+)`)

// killWithWatchdog SIGKILLs the server and, first, its watchdog, as a kill
// of their whole cgroup would: what the start-up reaping of the next
// server is left for.
func killWithWatchdog(t *testing.T, p *proc) {
	t.Helper()
	m := watchdogPIDRe.FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("the server logged no watchdog_pid:\n%s", p.stderr.String())
	}
	pid, _ := strconv.Atoi(m[1])
	wd, err := os.FindProcess(pid)
	if err == nil {
		err = wd.Kill()
	}
	if err != nil {
		t.Fatalf("kill the watchdog %d: %v", pid, err)
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
}
