package sandbox_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/agentconn"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// newEngine returns an engine on the real Docker engine with the test
// images that sees only its own containers (so max_sandboxes does not
// depend on other tests sharing the engine); its sandboxes are removed when
// the test ends.
func newEngine(t *testing.T, edit func(*config.Config)) (*sandbox.Engine, *client.Client) {
	t.Helper()
	eng, te := newEngineWith(t, engineOptions{edit: edit, scoped: true})
	return eng, te.cli
}

func mustCreate(t *testing.T, eng *sandbox.Engine, req sandbox.CreateRequest) *sandbox.Sandbox {
	t.Helper()
	sb, err := eng.Create(context.Background(), req)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	return sb.Sandbox
}

func mustExec(t *testing.T, eng *sandbox.Engine, id, cmd string) sandbox.ExecResult {
	t.Helper()
	res, err := eng.Exec(context.Background(), id, sandbox.ExecRequest{Command: cmd})
	if err != nil {
		t.Fatalf("exec %q: %v", cmd, err)
	}
	return res
}

func TestExecBasics(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})

	res := mustExec(t, eng, sb.ID, `echo out; echo err >&2; exit 3`)
	if res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" || res.TimedOut || res.Truncated || res.OOMKilled {
		t.Errorf("got %+v", res)
	}
	res = mustExec(t, eng, sb.ID, `pwd; echo $HOME`)
	if res.Stdout != "/workspace\n/workspace\n" {
		t.Errorf("pwd/HOME = %q", res.Stdout)
	}
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "cat; echo $FOO", Stdin: "hello\n", Env: map[string]string{"FOO": "bar"}})
	if err != nil || res.Stdout != "hello\nbar\n" {
		t.Errorf("stdin/env: %+v %v", res, err)
	}
	res = mustExec(t, eng, sb.ID, `python3 -c 'print(6*7)'`)
	if res.Stdout != "42\n" {
		t.Errorf("python: %+v", res)
	}
}

func TestExecTimeoutKillsTree(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	start := time.Now()
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{
		Command:        `sleep 1000 & (sleep 1000 &) ; setsid sleep 1000 & echo started; sleep 1000`,
		TimeoutSeconds: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != 124 {
		t.Errorf("want timed_out and exit 124, got %+v", res)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("timeout took %v", d)
	}
	if !strings.Contains(res.Stdout, "started") {
		t.Errorf("stdout = %q", res.Stdout)
	}
	// The sandbox's first command started the agent, whatever the engine
	// (the start is not the command's time, which on Podman it used up).
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
		t.Errorf("exec path = %q (%s), want the agent", p, why)
	}
	// Nothing but the keep-alive loop (and its sleep) may be left.
	ps := mustExec(t, eng, sb.ID, `for d in /proc/[0-9]*; do read -r l < $d/cmdline 2>/dev/null; tr '\0' ' ' < $d/cmdline; echo; done`)
	if strings.Count(ps.Stdout, "sleep 1000") > 0 {
		t.Errorf("processes survived the timeout:\n%s", ps.Stdout)
	}
}

func TestExecCancelKillsTree(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	ctx, cancel := context.WithCancel(context.Background())
	var mu sync.Mutex
	var seen strings.Builder
	started := make(chan struct{})
	var once sync.Once
	go func() {
		<-started
		cancel()
	}()
	_, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: `sleep 777 & echo go; sleep 777`, Output: func(stream string, p []byte) {
		mu.Lock()
		seen.Write(p)
		mu.Unlock()
		once.Do(func() { close(started) })
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("want context.Canceled, got %v", err)
	}
	ps := mustExec(t, eng, sb.ID, `for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline; echo; done`)
	if strings.Contains(ps.Stdout, "sleep 777") {
		t.Errorf("processes survived cancellation:\n%s", ps.Stdout)
	}
}

func TestOutputCapped(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	res := mustExec(t, eng, sb.ID, `echo BEGIN; head -c 52428800 /dev/zero | tr '\0' x; echo; echo END`)
	if !res.Truncated {
		t.Error("want truncated")
	}
	if len(res.Stdout) > 70000 {
		t.Errorf("stdout is %d bytes", len(res.Stdout))
	}
	if !strings.HasPrefix(res.Stdout, "BEGIN\n") || !strings.HasSuffix(res.Stdout, "END\n") || !strings.Contains(res.Stdout, "bytes of output omitted") {
		t.Errorf("head/tail/note missing: %q ... %q", res.Stdout[:40], res.Stdout[len(res.Stdout)-40:])
	}
}

func TestOOMKilled(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{MemoryMB: 128})
	// bomb reports whether cmd ended in a kill for memory.
	bomb := func(cmd string) bool {
		res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: cmd})
		if gVisorMemoryKill(t, err, 128) {
			return true
		}
		if err != nil {
			t.Fatalf("exec %q: %v", cmd, err)
		}
		t.Logf("%q: %+v", cmd, res)
		return res.ExitCode == 137 && res.OOMKilled
	}
	// Python may fail the allocation itself (MemoryError) when the kernel
	// refuses; the allocation must be touched to be OOM-killed.
	if !bomb(`python3 -c 'b = bytearray(4 * 1024**3); print(len(b))'`) && !bomb(`python3 -c 'l = []
while True: l.append(b"x" * (16 * 1024 * 1024))'`) {
		t.Error("want exit 137 and oom_killed (results above)")
	}
	sb = survivorOrNew(t, eng, sb, sandbox.CreateRequest{MemoryMB: 128})
	// A plain kill -9 is not an OOM kill.
	res := mustExec(t, eng, sb.ID, `sh -c 'kill -9 $$'`)
	if res.ExitCode != 137 || res.OOMKilled {
		t.Errorf("kill -9: want 137 and not oom_killed, got %+v", res)
	}
}

func TestForkBombContained(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Pids: 64})
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: `bomb() { bomb | bomb & }; bomb; sleep 3; echo done`, TimeoutSeconds: 5})
	switch {
	case errors.Is(err, sandbox.ErrNotFound):
		// Under gVisor the bomb can take the whole sandbox (gVisor
		// itself then fails to start a thread, and stops): the call
		// says so, and a new sandbox works.
		t.Logf("the fork bomb took the sandbox: %v", err)
		if testenv.Runtime() == "runsc" && !strings.Contains(err.Error(), "pids limit (64") {
			t.Errorf("the end of the sandbox does not say the pids limit was reached: %v", err)
		}
		sb = mustCreate(t, eng, sandbox.CreateRequest{Pids: 64})
	case err != nil:
		t.Fatal(err)
	default:
		t.Logf("fork bomb: exit=%d timed_out=%v", res.ExitCode, res.TimedOut)
	}
	// The sandbox is still usable afterwards and the host is fine.
	var after sandbox.ExecResult
	for i := 0; i < 20; i++ {
		after, err = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "echo alive", TimeoutSeconds: 10})
		if err == nil && after.Stdout == "alive\n" {
			break
		}
		if errors.Is(err, sandbox.ErrNotFound) {
			t.Logf("the fork bomb took the sandbox: %v", err)
			sb = mustCreate(t, eng, sandbox.CreateRequest{Pids: 64})
		}
		time.Sleep(500 * time.Millisecond)
	}
	if after.Stdout != "alive\n" {
		t.Errorf("sandbox unusable after fork bomb: %+v %v", after, err)
	}
}

func TestPolicyRefusals(t *testing.T) {
	eng, _ := newEngine(t, func(c *config.Config) { c.Limits.MaxSandboxes = 1 })
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  sandbox.CreateRequest
		want error
	}{
		{"image outside policy", sandbox.CreateRequest{Image: "evil/miner:latest"}, sandbox.ErrPolicy},
		{"bad image ref", sandbox.CreateRequest{Image: "--privileged"}, sandbox.ErrInvalid},
		{"memory above policy", sandbox.CreateRequest{MemoryMB: 100000}, sandbox.ErrPolicy},
		{"cpus above policy", sandbox.CreateRequest{CPUs: 64}, sandbox.ErrPolicy},
		{"pids above policy", sandbox.CreateRequest{Pids: 1 << 20}, sandbox.ErrPolicy},
		{"egress not allowed", sandbox.CreateRequest{Network: "egress"}, sandbox.ErrPolicy},
		{"unknown language", sandbox.CreateRequest{Language: "cobol"}, sandbox.ErrInvalid},
		{"bad env name", sandbox.CreateRequest{Env: map[string]string{"A B": "x"}}, sandbox.ErrInvalid},
		{"reserved env", sandbox.CreateRequest{Env: map[string]string{"LD_PRELOAD": "/x.so"}}, sandbox.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Create(ctx, tc.req)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	if _, err := eng.Create(ctx, sandbox.CreateRequest{}); !errors.Is(err, sandbox.ErrLimit) {
		t.Errorf("second sandbox with max_sandboxes=1: got %v, want ErrLimit", err)
	}
	for _, tc := range []struct {
		name string
		req  sandbox.ExecRequest
		want error
	}{
		{"empty command", sandbox.ExecRequest{Command: "  "}, sandbox.ErrInvalid},
		{"huge command", sandbox.ExecRequest{Command: strings.Repeat("x", 1<<20)}, sandbox.ErrInvalid},
		{"workdir escapes", sandbox.ExecRequest{Command: "ls", Workdir: "../etc"}, sandbox.ErrPolicy},
		{"timeout above policy", sandbox.ExecRequest{Command: "ls", TimeoutSeconds: 100000}, sandbox.ErrPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := eng.Exec(ctx, sb.ID, tc.req)
			if !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := eng.Exec(ctx, "nosuchsandbox", sandbox.ExecRequest{Command: "ls"}); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("unknown id: got %v", err)
	}
}

func TestRunCodeOneShotRemovesSandbox(t *testing.T) {
	eng, cli := newEngine(t, nil)
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Code: "import os\nprint(os.getuid(), os.getcwd())"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Stdout != "1000 /workspace\n" || res.ExitCode != 0 || !res.OneShot {
		t.Errorf("got %+v", res)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		if _, err := cli.ContainerInspect(ctx, backend.ContainerName(res.SandboxID)); cerrdefs.IsNotFound(err) {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("one-shot sandbox was not removed")
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestCancelledCreateLeavesNothing cancels creates at moments spread over
// their life; whatever the moment, no container or volume is left behind.
func TestCancelledCreateLeavesNothing(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	for i := 0; i < 12; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i*15)*time.Millisecond)
		sb, err := eng.Create(ctx, sandbox.CreateRequest{})
		cancel()
		if err == nil {
			eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{})
		}
	}
	eng.Close(context.Background())
	waitFor(t, "no containers left", 20*time.Second, func() bool {
		return len(ownContainers(t, te, eng, false)) == 0
	})
	vols, err := te.cli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", backend.LabelOwner+"="+eng.Owner()))})
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Volumes) > 0 {
		t.Errorf("%d workspace volumes left", len(vols.Volumes))
	}
}

// TestStopDuringAgentStartFreesClose: sandboxes stopped while their
// command agents start in the background (each create starts one) leave
// nothing for Close to wait on. Under gVisor the engine's exec streams
// can outlive a removed container, and a server once took the agent
// start's whole bound (agentconn.LaunchTimeout) to exit after its client
// went away; the fake layer (TestFakeStopEndsAgentStart) holds the start
// on purpose.
func TestStopDuringAgentStartFreesClose(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	for i := 0; i < 4; i++ {
		sb := mustCreate(t, eng, sandbox.CreateRequest{})
		time.Sleep(time.Duration(i*50) * time.Millisecond)
		if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	if err := eng.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Not a timing: a Close held by a start waits for its whole bound.
	if d := time.Since(start); d >= agentconn.LaunchTimeout/2 {
		t.Errorf("Close took %v: it waited for an agent start in a removed sandbox", d.Round(time.Millisecond))
	}
	t.Logf("Close took %v", time.Since(start).Round(time.Millisecond))
	if left := ownContainers(t, te, eng, false); len(left) > 0 {
		t.Errorf("%d containers left", len(left))
	}
}

// TestIdleExpiry: an idle sandbox is removed when its TTL passes (a "minute"
// is 400 ms here), but not while a command runs in it.
func TestIdleExpiry(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true, run: true, ttlUnit: 400 * time.Millisecond})
	sb := mustCreate(t, eng, sandbox.CreateRequest{TTLMinutes: 1})
	// Busy for three TTLs: still there afterwards.
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "sleep 1.2; echo done"})
	if err != nil || res.Stdout != "done\n" {
		t.Fatalf("a busy sandbox expired: %+v %v", res, err)
	}
	waitFor(t, "the idle sandbox to expire", 20*time.Second, func() bool {
		_, err := eng.Get(sb.ID)
		return errors.Is(err, sandbox.ErrNotFound)
	})
	waitFor(t, "its container to be removed", 20*time.Second, func() bool {
		return len(ownContainers(t, te, eng, false)) == 0
	})
}
