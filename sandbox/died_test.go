package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// callDeadline is how long a call on a sandbox whose container stops may
// take to return. It is not a measure of speed: the calls below ask for a
// timeout ten times as long, so only a call that waits for its own
// timeout (the hang this guards against) misses it.
const callDeadline = 60 * time.Second

// longTimeout is the timeout the calls below ask for.
const longTimeout = 600

// within runs call and fails the test if it has not returned by the
// deadline.
func within(t *testing.T, what string, call func()) {
	t.Helper()
	done := make(chan struct{})
	go func() {
		defer close(done)
		call()
	}()
	select {
	case <-done:
	case <-time.After(callDeadline):
		t.Fatalf("%s did not return within %v", what, callDeadline)
	}
}

// survivorOrNew returns sb if it outlived an out-of-memory kill in it, as
// under runc, where the kernel kills one process. Under gVisor the kill
// takes the whole container: sb must then say it is gone and why, and a
// new sandbox made from req is returned.
func survivorOrNew(t *testing.T, eng *sandbox.Engine, sb *sandbox.Sandbox, req sandbox.CreateRequest) *sandbox.Sandbox {
	t.Helper()
	_, err := eng.Get(sb.ID)
	if err == nil {
		return sb
	}
	if !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "memory") {
		t.Errorf("after an OOM kill took the sandbox: got %v, want ErrNotFound saying it was killed for memory", err)
	}
	return mustCreate(t, eng, req)
}

// gVisorMemoryKill reports whether err is how a call ends when gVisor's own
// memory accounting took the whole sandbox with SIGKILL and the engine gave
// no OOM flag (seen in CI, not on demand): accepted under runsc only, and
// only if the error names the memory limit as the likely cause, never only
// "killed from outside".
func gVisorMemoryKill(t *testing.T, err error, memoryMB int) bool {
	t.Helper()
	if err == nil || testenv.Runtime() != "runsc" {
		return false
	}
	if !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), fmt.Sprintf("under gVisor most likely for using more than its %d MB of memory", memoryMB)) {
		return false
	}
	t.Logf("gVisor took the whole sandbox without the engine's OOM flag: %v", err)
	return true
}

// memoryBomb grows until the memory limit is hit, in Python.
const memoryBomb = "b = []\nwhile True: b.append(bytearray(10**7))"

// TestMemoryBombEndsCall: a memory bomb's call returns with exit 137 and
// oom_killed, under runc (the process is killed) and under gVisor (the
// whole container is), through sandbox_exec's path and run_code's resident
// interpreter alike.
func TestMemoryBombEndsCall(t *testing.T) {
	eng, _ := newEngine(t, nil)
	for _, tc := range []struct {
		name string
		run  func(id string) (sandbox.ExecResult, bool, error)
	}{
		{"exec", func(id string) (sandbox.ExecResult, bool, error) {
			res, err := eng.Exec(context.Background(), id, sandbox.ExecRequest{Command: "python3 -c '" + memoryBomb + "'", TimeoutSeconds: longTimeout})
			return res, true, err
		}},
		{"run_code", func(id string) (sandbox.ExecResult, bool, error) {
			res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: id, Code: memoryBomb, TimeoutSeconds: longTimeout})
			return res.ExecResult, res.StateLost, err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			req := sandbox.CreateRequest{Language: "python", MemoryMB: 128}
			sb := mustCreate(t, eng, req)
			var (
				res  sandbox.ExecResult
				lost bool
				err  error
			)
			within(t, "the memory bomb's call", func() { res, lost, err = tc.run(sb.ID) })
			switch {
			case gVisorMemoryKill(t, err, req.MemoryMB):
			case err != nil:
				t.Fatal(err)
			default:
				if res.ExitCode != 137 || !res.OOMKilled || res.TimedOut || !lost {
					t.Errorf("want exit 137, oom_killed, not timed out, state lost; got %+v", res)
				}
				if !strings.Contains(res.Stderr, "128 MB") {
					t.Errorf("stderr does not name the limit: %q", res.Stderr)
				}
			}
			// The sandbox, or its successor, works.
			sb = survivorOrNew(t, eng, sb, req)
			if got := mustExec(t, eng, sb.ID, "echo alive"); got.Stdout != "alive\n" {
				t.Errorf("after the bomb: %+v", got)
			}
		})
	}
}

// TestKilledFromOutsideEndsCall kills a sandbox's container (docker kill)
// while a long call runs in it: the call ends with an error that says the
// sandbox was killed and is gone, and so do later calls on its id.
func TestKilledFromOutsideEndsCall(t *testing.T) {
	eng, cli := newEngine(t, nil)
	for _, tc := range []struct {
		name string
		run  func(id string, out sandbox.OutputFunc) error
	}{
		{"exec", func(id string, out sandbox.OutputFunc) error {
			_, err := eng.Exec(context.Background(), id, sandbox.ExecRequest{Command: "echo started; sleep 900", TimeoutSeconds: longTimeout, Output: out})
			return err
		}},
		{"run_code", func(id string, out sandbox.OutputFunc) error {
			_, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: id, Code: "import time\nprint('started', flush=True)\ntime.sleep(900)", TimeoutSeconds: longTimeout, Output: out})
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
			started := make(chan struct{})
			var once sync.Once
			out := func(string, []byte) { once.Do(func() { close(started) }) }
			var err error
			finished := make(chan struct{})
			killed := make(chan error, 1)
			go func() {
				select {
				case <-started:
					killed <- cli.ContainerKill(context.Background(), sb.ContainerID, "KILL")
				case <-finished:
					killed <- errors.New("the call ended before it started")
				}
			}()
			within(t, "the call in the killed sandbox", func() {
				defer close(finished)
				err = tc.run(sb.ID, out)
			})
			if kerr := <-killed; kerr != nil {
				t.Fatalf("docker kill: %v (the call returned %v)", kerr, err)
			}
			if !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "from outside") {
				t.Fatalf("want ErrNotFound saying the sandbox was killed from outside, got %v", err)
			}
			_, err = eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "true"})
			if !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "no longer exists") || !strings.Contains(err.Error(), "from outside") {
				t.Errorf("a later call: want ErrNotFound saying what happened, got %v", err)
			}
		})
	}
}
