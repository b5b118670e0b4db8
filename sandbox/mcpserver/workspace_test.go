package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// poolEnv is serverEnv with a warm pool of size python sandboxes and a
// max_sandboxes that other tests' sandboxes on the shared engine cannot
// reach.
func poolEnv(t *testing.T, size int) []string {
	t.Helper()
	env := serverEnv(t, "\n[limits]\nmax_sandboxes = 100\n")
	path := envValue(env, "MCP_SANDBOX_CONFIG")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.Replace(string(b), "[pool]\nsize = 0\n", fmt.Sprintf("[pool]\nsize = %d\nlanguages = [\"python\"]\n", size), 1)
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return env
}

// hostName is this host's name, as servers label what they make with it.
func hostName(t *testing.T) string {
	t.Helper()
	h, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// ofServers keeps the labels of what the server processes pids made on
// this host: other tests share the engine.
func ofServers(t *testing.T, labels map[string]string, pids []int) bool {
	if labels[backend.LabelOwnerHost] != hostName(t) {
		return false
	}
	for _, pid := range pids {
		if labels[backend.LabelOwnerPID] == strconv.Itoa(pid) {
			return true
		}
	}
	return false
}

// serverContainers lists the containers the servers pids made.
func serverContainers(t *testing.T, cli *client.Client, pids []int, extra ...filters.KeyValuePair) []container.Summary {
	t.Helper()
	f := filters.NewArgs(append(extra, filters.Arg("label", backend.LabelManaged+"=true"))...)
	list, err := cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	var out []container.Summary
	for _, c := range list {
		if ofServers(t, c.Labels, pids) {
			out = append(out, c)
		}
	}
	return out
}

// leftVolumes lists the volumes the servers pids made, and the volumes
// named for the sandboxes ids whatever their labels (the engine makes an
// unlabelled one when a mount's volume is missing).
func leftVolumes(t *testing.T, cli *client.Client, pids []int, ids []string) []string {
	t.Helper()
	list, err := cli.VolumeList(context.Background(), volume.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, v := range list.Volumes {
		named := false
		for _, id := range ids {
			named = named || strings.HasPrefix(v.Name, backend.ContainerName(id)+"-") || strings.HasPrefix(v.Name, backend.PoolNamePrefix+id+"-")
		}
		if named || ofServers(t, v.Labels, pids) {
			left = append(left, v.Name)
		}
	}
	return left
}

// checkNothingLeft fails when a container or volume of the servers pids
// (or named for ids) is still there.
func checkNothingLeft(t *testing.T, cli *client.Client, pids []int, ids []string) {
	t.Helper()
	for _, c := range serverContainers(t, cli, pids) {
		t.Errorf("container left: %v (%s)", c.Names, c.State)
	}
	for _, v := range leftVolumes(t, cli, pids, ids) {
		t.Errorf("volume left: %s", v)
	}
}

// waitLogged waits until the server has logged msg.
func waitLogged(t *testing.T, p *proc, msg string, within time.Duration) {
	t.Helper()
	p.stderr.WaitLine(t, msg, within)
}

// setEnv returns env with key set to value.
func setEnv(env []string, key, value string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, key+"=") {
			out = append(out, kv)
		}
	}
	return append(out, key+"="+value)
}

// waitPool waits until the server pid has a warm pool sandbox.
func waitPool(t *testing.T, cli *client.Client, pid int) {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for len(serverContainers(t, cli, []int{pid}, filters.Arg("label", backend.LabelPool+"=true"), filters.Arg("name", backend.PoolNamePrefix))) == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("server %d made no pool sandbox", pid)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// waitExit waits for the server process to end.
func waitExit(t *testing.T, p *proc, within time.Duration) {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(within):
		t.Fatalf("server %d did not exit within %v; stderr:\n%s", p.cmd.Process.Pid, within, p.stderr.String())
	}
}

// workspaceProbe writes a file in /workspace as the sandbox user and says
// what /workspace is: its file system type, size in bytes and owner (the
// owner through Python: gVisor refuses the statx of coreutils' stat).
const workspaceProbe = `echo ok > /workspace/probe && cat /workspace/probe && id -u && ` +
	`echo "$(stat -f -c '%T %b %S' /workspace) $(python3 -c 'import os; print(os.lstat("/workspace").st_uid)')"`

// checkWorkspace runs workspaceProbe in sandbox id and returns what is
// wrong with its workspace, or "".
func checkWorkspace(ctx context.Context, sess *mcp.ClientSession, id string) string {
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "sandbox_exec", Arguments: map[string]any{"sandbox_id": id, "command": workspaceProbe}})
	if err != nil {
		return err.Error()
	}
	out := text(res)
	if res.IsError {
		return out
	}
	var r execOut
	if b, err := json.Marshal(res.StructuredContent); err != nil || json.Unmarshal(b, &r) != nil {
		return fmt.Sprintf("sandbox_exec's result: %s", out)
	}
	r.Stdout, r.Stderr = outputOf(out)["stdout"], outputOf(out)["stderr"]
	lines := strings.Split(strings.TrimSpace(r.Stdout), "\n")
	if r.ExitCode != 0 || len(lines) != 3 || lines[0] != "ok" || lines[1] != "1000" {
		return fmt.Sprintf("the sandbox user could not write /workspace: exit %d, stdout %q, stderr %q", r.ExitCode, r.Stdout, r.Stderr)
	}
	var typ string
	var blocks, bsize int64
	var uid int
	if _, err := fmt.Sscan(lines[2], &typ, &blocks, &bsize, &uid); err != nil {
		return fmt.Sprintf("stat: %q: %v", lines[2], err)
	}
	want := "tmpfs"
	if testenv.Runtime() == "runsc" {
		want = "v9fs" // gVisor shows a volume mount through its gofer
	}
	if typ != want || blocks*bsize != 512<<20 || uid != 1000 {
		return fmt.Sprintf("/workspace is %s of %d bytes owned by %d, want a 512 MB tmpfs owned by 1000", typ, blocks*bsize, uid)
	}
	return ""
}

// TestWorkspacesSurviveStartingServers starts ten servers, each sweeping
// orphans as it starts (half of them with a warm pool), while another
// server creates sandboxes in a loop: every workspace is the capped tmpfs
// the sandbox user can write, and once all have exited (stdin EOF) no
// container or volume of theirs is left.
func TestWorkspacesSurviveStartingServers(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	creatorEnv := poolEnv(t, 1)
	creator := startServer(t, creatorEnv)
	sess := sdkClient(t, creator, nil)
	pids := []int{creator.cmd.Process.Pid}

	stop := make(chan struct{})
	var (
		mu       sync.Mutex
		ids      []string
		failures []string
	)
	loopDone := make(chan struct{})
	go func() {
		defer close(loopDone)
		ctx := context.Background()
		for n := 0; ; n++ {
			select {
			case <-stop:
				if n >= 10 {
					return
				}
			default:
			}
			cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
			res, err := sess.CallTool(cctx, &mcp.CallToolParams{Name: "sandbox_create", Arguments: map[string]any{}})
			var id string
			if err == nil && !res.IsError {
				if m, ok := res.StructuredContent.(map[string]any); ok {
					id, _ = m["sandbox_id"].(string)
				}
			}
			if id == "" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("create %d: %v %s", n, err, textOf(res)))
				mu.Unlock()
				cancel()
				continue
			}
			mu.Lock()
			ids = append(ids, id)
			mu.Unlock()
			if bad := checkWorkspace(cctx, sess, id); bad != "" {
				mu.Lock()
				failures = append(failures, fmt.Sprintf("sandbox %d (%s): %s", n, id, bad))
				mu.Unlock()
			}
			_, _ = sess.CallTool(cctx, &mcp.CallToolParams{Name: "sandbox_stop", Arguments: map[string]any{"sandbox_id": id}})
			cancel()
		}
	}()

	var servers []*proc
	for i := 0; i < 10; i++ {
		env := poolEnv(t, i%2)
		if i%4 < 2 {
			// The creator's installation: its reaper may judge the
			// creator's objects, and must find the creator alive.
			env = setEnv(env, "MCP_SANDBOX_STATE_DIR", envValue(creatorEnv, "MCP_SANDBOX_STATE_DIR"))
		}
		p := startServer(t, env, "--debug")
		sdkClient(t, p, nil)
		servers = append(servers, p)
		pids = append(pids, p.cmd.Process.Pid)
	}
	for i, p := range servers {
		waitLogged(t, p, "start-up reaping done", 2*time.Minute)
		if i%2 == 1 {
			waitPool(t, cli, p.cmd.Process.Pid)
		}
	}
	// Every workspace the servers hold now is the capped tmpfs volume.
	for _, c := range serverContainers(t, cli, pids) {
		ins, err := cli.ContainerInspect(context.Background(), c.ID)
		if err != nil {
			continue // removed meanwhile
		}
		for _, m := range ins.Mounts {
			if m.Destination != backend.Workspace {
				continue
			}
			v, err := cli.VolumeInspect(context.Background(), m.Name)
			if err == nil && (v.Options["type"] != "tmpfs" || v.Labels[backend.LabelManaged] != "true") {
				t.Errorf("%v: workspace volume %s has options %v, labels %v", c.Names, m.Name, v.Options, v.Labels)
			}
		}
	}
	close(stop)
	<-loopDone
	for _, p := range append(servers, creator) {
		p.stdin.Close()
	}
	for _, p := range append(servers, creator) {
		waitExit(t, p, 2*time.Minute)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("%d sandboxes created while ten servers started", len(ids))
	for _, f := range failures {
		t.Error(f)
	}
	checkNothingLeft(t, cli, pids, ids)
}

func textOf(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	return text(res)
}

// TestServerExitLeavesNoVolumes: however its client ends it, a server
// with sandboxes and a warm pool leaves no container and no volume.
func TestServerExitLeavesNoVolumes(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	for _, tc := range []struct {
		name string
		end  func(p *proc) error
	}{
		{"stdin EOF", func(p *proc) error { return p.stdin.Close() }},
		{"SIGTERM", func(p *proc) error { return p.cmd.Process.Signal(syscall.SIGTERM) }},
		{"SIGINT", func(p *proc) error { return p.cmd.Process.Signal(syscall.SIGINT) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := startServer(t, poolEnv(t, 1))
			ids := createSandboxes(t, sdkClient(t, p, nil), 2)
			pid := p.cmd.Process.Pid
			waitPool(t, cli, pid)
			if err := tc.end(p); err != nil {
				t.Fatal(err)
			}
			waitExit(t, p, 2*time.Minute)
			checkNothingLeft(t, cli, []int{pid}, ids)
		})
	}
}

// TestKilledServerLeavesNoVolumes: a server SIGKILLed with its watchdog,
// with sandboxes and a warm pool, cleans up nothing; the start-up reaping
// of the next server of its installation (the same state directory: the
// killed one's lock is free) removes every container and volume it left.
func TestKilledServerLeavesNoVolumes(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	env := poolEnv(t, 1)
	a := startServer(t, env)
	ids := createSandboxes(t, sdkClient(t, a, nil), 2)
	pid := a.cmd.Process.Pid
	waitPool(t, cli, pid)
	killWithWatchdog(t, a)
	waitExit(t, a, time.Minute)
	if n := len(serverContainers(t, cli, []int{pid})); n < 3 {
		t.Fatalf("%d containers of the killed server; the test needs its two sandboxes and a pool one", n)
	}
	if len(leftVolumes(t, cli, []int{pid}, ids)) == 0 {
		t.Fatal("the killed server left no volume; the test cannot show reaping")
	}
	b := startServer(t, env, "--debug")
	sdkClient(t, b, nil)
	waitLogged(t, b, "start-up reaping done", 2*time.Minute)
	checkNothingLeft(t, cli, []int{pid}, ids)
}
