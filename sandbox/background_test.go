package sandbox_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
)

// A background command outlives its start's timeout, writes its output to
// its log, is listed running, and `kill PID` stops it and what it started
// (a compound command, which sh forks instead of becoming) — through the
// command agent and through docker exec alike.
func TestBackgroundProcess(t *testing.T) {
	for _, c := range []struct {
		name string
		wrap func(*docker.Backend) backend.Backend
		path string
	}{
		{"agent", nil, sandbox.ExecAgent},
		{"docker exec", func(be *docker.Backend) backend.Backend { return foreignArch{be} }, sandbox.ExecDocker},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng, _ := newEngineWith(t, engineOptions{wrap: c.wrap})
			sb := mustCreate(t, eng, sandbox.CreateRequest{})
			ctx := context.Background()
			p, err := eng.StartBackground(ctx, sb.ID, sandbox.ExecRequest{Command: "echo started; cd /tmp && sleep 1001", TimeoutSeconds: 1})
			if err != nil || p.PID <= 0 || !p.Running {
				t.Fatalf("start: %+v %v", p, err)
			}
			if got, _ := execPath(t, eng, sb.ID); got != c.path {
				t.Errorf("exec path %q, want %q", got, c.path)
			}
			mustExec(t, eng, sb.ID, "sleep 2") // past the start's timeout
			if ps := eng.Processes(ctx, sb.ID); len(ps) != 1 || ps[0].PID != p.PID || !ps[0].Running {
				t.Errorf("processes: %+v", ps)
			}
			if log := mustExec(t, eng, sb.ID, "cat "+p.LogPath); log.Stdout != "started\n" {
				t.Errorf("log %s: %q", p.LogPath, log.Stdout)
			}
			if ps := mustExec(t, eng, sb.ID, psScript); !strings.Contains(ps.Stdout, "sleep 1001") {
				t.Fatalf("sleep 1001 is not running:\n%s", ps.Stdout)
			}
			if res := mustExec(t, eng, sb.ID, "kill "+strconv.Itoa(p.PID)); res.ExitCode != 0 {
				t.Fatalf("kill: %+v", res)
			}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
				ps := eng.Processes(ctx, sb.ID)
				left := mustExec(t, eng, sb.ID, psScript).Stdout
				if len(ps) == 1 && !ps[0].Running && !strings.Contains(left, "sleep 1001") {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("after kill: %+v\n%s", ps, left)
				}
			}
		})
	}
}
