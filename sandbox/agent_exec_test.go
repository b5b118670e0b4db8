package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// execPath returns how sandbox id runs commands, as sandbox_list says.
func execPath(t *testing.T, eng *sandbox.Engine, id string) (string, string) {
	t.Helper()
	list, err := eng.List(context.Background(), sandbox.ListRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, in := range list.Sandboxes {
		if in.ID == id {
			return in.Exec, in.ExecNote
		}
	}
	t.Fatalf("sandbox %s not listed", id)
	return "", ""
}

// psScript lists the command lines of the sandbox's processes.
const psScript = `for d in /proc/[0-9]*; do tr '\0' ' ' < $d/cmdline 2>/dev/null; echo; done`

// killAgentScript kills the sandbox's command agent from inside, as the
// sandbox user can.
const killAgentScript = `for d in /proc/[0-9]*; do case $(tr '\0' ' ' < $d/cmdline 2>/dev/null) in /workspace/.mcp-sandbox-agent-*) kill -9 ${d#/proc/};; esac; done`

// The agent keeps every behaviour of docker exec, in an image with Python
// and in busybox (no interpreter at all). OOM and fork bombs are in
// engine_test.go, which runs through the agent too (checked here).
func TestAgentExecBehaviours(t *testing.T) {
	testenv.Docker(t, testenv.TinyImage)
	eng, _ := newEngine(t, func(c *config.Config) { c.Images.Allowed = append(c.Images.Allowed, testenv.TinyImage) })
	for _, image := range []string{"", testenv.TinyImage} {
		t.Run("image="+image, func(t *testing.T) {
			sb := mustCreate(t, eng, sandbox.CreateRequest{Image: image})
			res := mustExec(t, eng, sb.ID, `echo out; echo err >&2; exit 3`)
			if res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" {
				t.Errorf("exit/split: %+v", res)
			}
			if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
				t.Fatalf("exec path = %q (%s), want the agent", p, why)
			}
			// The agent's own account of the command, for the timing log
			// (the benchmark's breakdown): there, and within the round trip.
			if tm := res.Timing; tm.Command <= 0 || tm.Command > tm.Sandbox {
				t.Errorf("timing %+v: want the agent's command time, within the round trip", tm)
			}
			res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{
				Command: `cat; echo "$FOO"; pwd; echo "$HOME"`, Stdin: "in\n", Env: map[string]string{"FOO": "bar"}, Workdir: "sub",
			})
			if err == nil || !strings.Contains(err.Error(), "sub") {
				// A missing working directory is an error, as with docker exec.
				t.Errorf("missing workdir: %+v %v", res, err)
			}
			mustExec(t, eng, sb.ID, "mkdir sub")
			res, err = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{
				Command: `cat; echo "$FOO"; pwd; echo "$HOME"`, Stdin: "in\n", Env: map[string]string{"FOO": "bar"}, Workdir: "sub",
			})
			if err != nil || res.Stdout != "in\nbar\n/workspace/sub\n/workspace\n" {
				t.Errorf("stdin/env/cwd: %+v %v", res, err)
			}
			if res := mustExec(t, eng, sb.ID, `read x; echo "[$x]"`); res.Stdout != "[]\n" {
				t.Errorf("no stdin must read as empty: %+v", res)
			}
			if res := mustExec(t, eng, sb.ID, `kill -9 $$`); res.ExitCode != 137 || res.OOMKilled {
				t.Errorf("kill -9: %+v", res)
			}
			// A child left in the background that holds the output open
			// does not hold the call until its timeout, as with docker exec.
			res, err = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: `sleep 1001 & echo ok`, TimeoutSeconds: 300})
			if err != nil || res.TimedOut || res.ExitCode != 0 || res.Stdout != "ok\n" {
				t.Errorf("background child: %+v %v", res, err)
			}
			res, err = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{
				Command: `sleep 1000 & (sleep 1000 &) ; setsid sleep 1000 & echo started; sleep 1000`, TimeoutSeconds: 2,
			})
			if err != nil || !res.TimedOut || res.ExitCode != 124 || !strings.Contains(res.Stdout, "started") {
				t.Errorf("timeout: %+v %v", res, err)
			}
			if ps := mustExec(t, eng, sb.ID, psScript); strings.Contains(ps.Stdout, "sleep 1000") {
				t.Errorf("processes survived the timeout:\n%s", ps.Stdout)
			}
			ctx, cancel := context.WithCancel(context.Background())
			var once sync.Once
			_, err = eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: `sleep 777 & echo go; sleep 777`, Output: func(string, []byte) { once.Do(cancel) }})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancel: %v", err)
			}
			if ps := mustExec(t, eng, sb.ID, psScript); strings.Contains(ps.Stdout, "sleep 777") {
				t.Errorf("processes survived cancellation:\n%s", ps.Stdout)
			}
			// The file tools' tar runs through the agent too: binary
			// content comes back intact.
			bin := make([]byte, 3*256)
			for i := range bin {
				bin[i] = byte(i)
			}
			if _, err := eng.WriteFile(context.Background(), sb.ID, sandbox.WriteFileRequest{Path: "bin.dat", Content: bin}); err != nil {
				t.Fatal(err)
			}
			got, err := eng.ReadFile(context.Background(), sb.ID, sandbox.ReadFileRequest{Path: "bin.dat"})
			if err != nil || !bytes.Equal(got.Data, bin) {
				t.Errorf("read back %d bytes (%v), want the %d written", len(got.Data), err, len(bin))
			}
			res = mustExec(t, eng, sb.ID, `echo BEGIN; i=0; while [ $i -lt 3000 ]; do echo 0123456789012345678901234567890123456789012345678901234567890123456789; i=$((i+1)); done; echo END`)
			if !res.Truncated || !strings.HasPrefix(res.Stdout, "BEGIN\n") || !strings.HasSuffix(res.Stdout, "END\n") || !strings.Contains(res.Stdout, "bytes of output omitted") {
				t.Errorf("output cap: truncated=%v, %d bytes", res.Truncated, len(res.Stdout))
			}
		})
	}
}

// A sandbox whose agent is killed from inside: the command running then
// is reported (not run again), and the next command starts a new agent.
func TestAgentKilledFromInside(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	mustExec(t, eng, sb.ID, "true")
	_, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: killAgentScript + "; sleep 2; echo late"})
	if err == nil || !strings.Contains(err.Error(), "agent stopped") {
		t.Errorf("want the agent's death reported, got %v", err)
	}
	if res := mustExec(t, eng, sb.ID, "echo again"); res.Stdout != "again\n" {
		t.Errorf("after the agent died: %+v", res)
	}
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
		t.Errorf("exec path = %q (%s), want a new agent", p, why)
	}
	// An agent that keeps dying is given up: commands go through docker
	// exec, and sandbox_list says so.
	for range 4 {
		_, _ = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: killAgentScript})
	}
	if res := mustExec(t, eng, sb.ID, "echo still"); res.Stdout != "still\n" {
		t.Errorf("after giving up the agent: %+v", res)
	}
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker || why == "" {
		t.Errorf("exec path = %q (%s), want docker exec with a reason", p, why)
	}
}

// foreignArch is the real backend on an engine whose architecture the
// server carries no agent for (a fault a local engine cannot produce).
type foreignArch struct{ *docker.Backend }

func (foreignArch) EngineArch(context.Context) (string, error) { return "s390x", nil }

// Where the agent cannot run, commands go through docker exec with the
// same results, and sandbox_list says so.
func TestAgentUnavailableFallsBack(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{wrap: func(be *docker.Backend) backend.Backend { return foreignArch{be} }})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: `cat; echo err >&2; exit 4`, Stdin: "x\n"})
	if err != nil || res.ExitCode != 4 || res.Stdout != "x\n" || res.Stderr != "err\n" {
		t.Errorf("got %+v %v", res, err)
	}
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker || !strings.Contains(why, "s390x") {
		t.Errorf("exec path = %q (%s), want docker exec for lack of an s390x agent", p, why)
	}
}

// slowForeignArch is foreignArch on an engine slow to say so (Podman
// answers in seconds under load).
type slowForeignArch struct{ *docker.Backend }

func (slowForeignArch) EngineArch(ctx context.Context) (string, error) {
	select {
	case <-time.After(3 * time.Second):
		return "s390x", nil
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

// The agent's start is not the command's time: the first command of a
// sandbox, with a timeout shorter than the agent takes to find it cannot
// run, runs through docker exec with its whole time, keeps its output up
// to the timeout, and has its tree killed.
func TestExecTimeoutAfterSlowAgentStart(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{wrap: func(be *docker.Backend) backend.Backend { return slowForeignArch{be} }})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{
		Command: `sleep 1000 & setsid sleep 1000 & echo started; sleep 1000`, TimeoutSeconds: 2,
	})
	if err != nil || !res.TimedOut || res.ExitCode != 124 || res.Stdout != "started\n" {
		t.Errorf("want the output and a timeout, got %+v %v", res, err)
	}
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker || !strings.Contains(why, "s390x") {
		t.Errorf("exec path = %q (%s), want docker exec for lack of an s390x agent", p, why)
	}
	if ps := mustExec(t, eng, sb.ID, psScript); strings.Contains(ps.Stdout, "sleep 1000") {
		t.Errorf("processes survived the timeout:\n%s", ps.Stdout)
	}
}

// engineExec runs argv in container cid as user through the engine
// itself (not the agent), and returns its stdout.
func engineExec(t *testing.T, cli *client.Client, cid, user string, argv ...string) string {
	t.Helper()
	ctx := context.Background()
	created, err := cli.ContainerExecCreate(ctx, cid, container.ExecOptions{Cmd: argv, User: user, AttachStdout: true, AttachStderr: true})
	if err != nil {
		t.Fatal(err)
	}
	hj, err := cli.ContainerExecAttach(ctx, created.ID, container.ExecAttachOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer hj.Close()
	var out, errb bytes.Buffer
	if _, err := stdcopy.StdCopy(&out, &errb, hj.Reader); err != nil {
		t.Fatal(err)
	}
	if ins, err := cli.ContainerExecInspect(ctx, created.ID); err != nil || ins.ExitCode != 0 {
		t.Fatalf("%q: exit %d %v: %s", argv, ins.ExitCode, err, errb.String())
	}
	return out.String()
}

// waitingShell waits for the agent to have one shell started ahead, and
// returns its pid.
func waitingShell(t *testing.T, cli *client.Client, sb *sandbox.Sandbox) string {
	t.Helper()
	var w []string
	for range 100 {
		if w = strings.Fields(engineExec(t, cli, sb.ContainerID, sb.User, "/bin/sh", "-c", testenv.AheadShellsScript)); len(w) == 1 {
			return w[0]
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("shells started ahead: %q, want one", w)
	return ""
}

// After a command, the agent starts the next one's shell ahead, and a
// command like it runs in that shell with the same results as in a shell
// started for it; one the sandbox's code kills, or whose directory it
// replaces, is not used.
func TestAgentShellAhead(t *testing.T) {
	testenv.Docker(t, testenv.TinyImage)
	eng, cli := newEngine(t, func(c *config.Config) { c.Images.Allowed = append(c.Images.Allowed, testenv.TinyImage) })
	for _, image := range []string{"", testenv.TinyImage} {
		t.Run("image="+image, func(t *testing.T) {
			sb := mustCreate(t, eng, sandbox.CreateRequest{Image: image})
			mustExec(t, eng, sb.ID, "true")
			pid := waitingShell(t, cli, sb)
			// The next command is that shell (its $$), and its answer is
			// the one a shell started for it gives.
			res := mustExec(t, eng, sb.ID, "echo $$; printf '%s|' \"$0\" \"$#\" \"$__c\"; echo; echo err >&2; exit 3")
			if res.ExitCode != 3 || res.Stdout != pid+"\n/bin/sh|0||\n" || res.Stderr != "err\n" {
				t.Errorf("in the shell started ahead (%s): %+v", pid, res)
			}
			// A text whose first line is what the agent sends before the
			// lines of a longer text ("#N", here N = 0) is run as written.
			pid = waitingShell(t, cli, sb)
			if res := mustExec(t, eng, sb.ID, "#0\necho $$ \"$#\""); res.Stdout != pid+" 0\n" || res.ExitCode != 0 {
				t.Errorf("text starting #0 in the shell started ahead (%s): %+v", pid, res)
			}
			// Killed by the sandbox's code: the next command starts afresh.
			pid = waitingShell(t, cli, sb)
			engineExec(t, cli, sb.ContainerID, sb.User, "/bin/sh", "-c", "kill -9 "+pid)
			if res := mustExec(t, eng, sb.ID, "echo $0 $$"); res.Stdout == "/bin/sh "+pid+"\n" || !strings.HasPrefix(res.Stdout, "/bin/sh ") || res.ExitCode != 0 {
				t.Errorf("after the waiting shell (%s) was killed: %+v", pid, res)
			}
			// Its directory replaced: the command runs in the new one.
			mustExec(t, eng, sb.ID, "mkdir d")
			if _, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true", Workdir: "d"}); err != nil {
				t.Fatal(err)
			}
			waitingShell(t, cli, sb)
			engineExec(t, cli, sb.ContainerID, sb.User, "/bin/sh", "-c", "cd /workspace && rmdir d && mkdir d && echo new > d/f")
			res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "cat f", Workdir: "d"})
			if err != nil || res.Stdout != "new\n" {
				t.Errorf("in a replaced directory: %+v %v", res, err)
			}
			// Removed: an error, as for any missing directory.
			waitingShell(t, cli, sb)
			engineExec(t, cli, sb.ContainerID, sb.User, "/bin/sh", "-c", "rm -r /workspace/d")
			if _, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true", Workdir: "d"}); err == nil || !strings.Contains(err.Error(), "d") {
				t.Errorf("in a removed directory: %v", err)
			}
		})
	}
}
