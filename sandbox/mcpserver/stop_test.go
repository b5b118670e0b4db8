package mcpserver_test

import (
	"context"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestStopRemovesInBackground: sandbox_stop answers before the container
// is removed, and the container and its volumes go afterwards.
func TestStopRemovesInBackground(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	p := startServer(t, serverEnv(t, ""))
	sess := sdkClient(t, p, nil)
	ids := createSandboxes(t, sess, 1)
	if res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": ids[0], "command": "sleep 1000 & echo ok"}); res.IsError {
		t.Fatalf("exec: %s", text(res))
	}
	if res := call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": ids[0]}); res.IsError {
		t.Fatalf("stop: %s", text(res))
	}
	if res := call(t, sess, "sandbox_exec", map[string]any{"sandbox_id": ids[0], "command": "true"}); !res.IsError {
		t.Errorf("exec after stop: want an error, got %s", text(res))
	}
	waitGone(t, cli, ids, 30*time.Second)
	vols, err := cli.VolumeList(context.Background(), volumeFilter(ids))
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Volumes) > 0 {
		t.Errorf("workspace volumes left behind: %d", len(vols.Volumes))
	}
}

// TestStopThenKilledServerReaped: a server killed (with its watchdog)
// right after answering sandbox_stop (its background removal cut short)
// leaves nothing that the next server does not remove.
func TestStopThenKilledServerReaped(t *testing.T) {
	cli := testenv.Docker(t, testenv.PythonImage)
	env := serverEnv(t, "")
	a := startServer(t, env)
	sess := sdkClient(t, a, nil)
	ids := createSandboxes(t, sess, 2)
	for _, id := range ids {
		if res := call(t, sess, "sandbox_stop", map[string]any{"sandbox_id": id}); res.IsError {
			t.Fatalf("stop: %s", text(res))
		}
	}
	killWithWatchdog(t, a)
	a.cmd.Wait()
	b := startServer(t, env)
	sdkClient(t, b, nil)
	waitGone(t, cli, ids, 30*time.Second)
	vols, err := cli.VolumeList(context.Background(), volumeFilter(ids))
	if err != nil {
		t.Fatal(err)
	}
	if len(vols.Volumes) > 0 {
		t.Errorf("workspace volumes left behind: %d", len(vols.Volumes))
	}
}
