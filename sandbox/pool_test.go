package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

func TestPoolClaimsWarmSandbox(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(1, "python"), run: true})
	waitReady(t, eng, "python", 1)
	pooled := poolIDs(t, te, eng)
	start := time.Now()
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Client: "test-client"})
	took := time.Since(start)
	if !pooled[sb.ID] {
		t.Fatalf("sandbox %s is not the pooled one (%v)", sb.ID, pooled)
	}
	ins, err := te.cli.ContainerInspect(context.Background(), sb.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	got := []string{strings.TrimPrefix(ins.Name, "/"), ins.Config.Labels[backend.LabelPool], ins.Config.User, fmt.Sprint(ins.HostConfig.ReadonlyRootfs), string(ins.HostConfig.NetworkMode)}
	if diff := cmp.Diff([]string{backend.ContainerName(sb.ID), "true", "1000:1000", "true", "none"}, got); diff != "" {
		t.Errorf("claimed container: name, pool label, user, read-only root, network (-want +got):\n%s", diff)
	}
	t.Logf("claim took %v", took)
	start = time.Now()
	runCells(t, eng, sb.ID, "", []cell{{code: "print(1)", want: cellOut{Stdout: "1\n"}}})
	t.Logf("first run_code in the claimed sandbox took %v (its interpreter was warm)", time.Since(start))
	// The pool refills with a new sandbox.
	waitReady(t, eng, "python", 1)
	if again := poolIDs(t, te, eng); again[sb.ID] || len(again) != 1 {
		t.Errorf("pool after refill: %v", again)
	}
	// The record says who claimed it.
	waitFor(t, "the claimed sandbox's record", 10*time.Second, func() bool {
		r, err := te.st.ReadRecord(sb.ID)
		return err == nil && r.Claimed && r.Client == "test-client"
	})
	// `ps` and the tray list it (its pool label stays after the claim),
	// and not the unclaimed pool container, unless asked.
	for _, withPool := range []bool{false, true} {
		list, err := inventory.Lister{Backend: docker.New(te.cli, testenv.Logger(t)), State: te.st, Pool: withPool}.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		claimed, unclaimed := false, 0
		for _, in := range list {
			switch {
			case in.ID == sb.ID:
				claimed = !in.Pool && in.Client == "test-client"
			case in.Pool && in.Owner == eng.Owner():
				unclaimed++
			}
		}
		if !claimed || (unclaimed > 0) != withPool {
			t.Errorf("Lister{Pool: %v}: claimed sandbox listed as one: %v; unclaimed pool containers: %d", withPool, claimed, unclaimed)
		}
	}
}

func TestPoolNeverHandsOutTwice(t *testing.T) {
	const n = 8
	eng, te := newEngineWith(t, engineOptions{edit: withPool(3, "python"), run: true, scoped: true})
	waitReady(t, eng, "python", 3)
	pooled := poolIDs(t, te, eng)
	var (
		mu    sync.Mutex
		ids   []string
		cids  = map[string]bool{}
		fromP int
		wg    sync.WaitGroup
	)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"})
			if err != nil {
				t.Errorf("create: %v", err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			ids = append(ids, sb.ID)
			cids[sb.ContainerID] = true
			if pooled[sb.ID] {
				fromP++
			}
		}()
	}
	wg.Wait()
	sort.Strings(ids)
	for i := 1; i < len(ids); i++ {
		if ids[i] == ids[i-1] {
			t.Errorf("sandbox %s handed out twice", ids[i])
		}
	}
	if len(cids) != n || fromP != 3 {
		t.Errorf("%d distinct containers for %d creates, %d from the pool of 3", len(cids), n, fromP)
	}
	for _, id := range ids {
		runCells(t, eng, id, "", []cell{{code: "import os\nprint(os.environ['HOME'])", want: cellOut{Stdout: "/workspace\n"}}})
	}
}

func TestPoolFallsBackWhenSettingsDiffer(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(1, "python"), run: true})
	for _, tc := range []struct {
		name     string
		req      sandbox.CreateRequest
		fromPool bool
	}{
		{"defaults spelled out", sandbox.CreateRequest{Language: "python", Network: "none", TTLMinutes: 5}, true},
		{"less memory", sandbox.CreateRequest{Language: "python", MemoryMB: 128}, false},
		{"fewer pids", sandbox.CreateRequest{Language: "python", Pids: 64}, false},
		{"own environment", sandbox.CreateRequest{Language: "python", Env: map[string]string{"GREETING": "hi"}}, false},
		{"another language", sandbox.CreateRequest{Language: "bash"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			waitReady(t, eng, "python", 1)
			pooled := poolIDs(t, te, eng)
			sb := mustCreate(t, eng, tc.req)
			if pooled[sb.ID] != tc.fromPool {
				t.Errorf("from the pool: %v, want %v", pooled[sb.ID], tc.fromPool)
			}
			if tc.req.Env != nil {
				runCells(t, eng, sb.ID, "", []cell{{code: "import os\nos.environ['GREETING']", want: cellOut{Result: "'hi'"}}})
			}
			if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPoolContainersDoNotCountTowardsMaxSandboxes(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{edit: func(c *config.Config) { withPool(1, "python")(c); c.Limits.MaxSandboxes = 1 }, run: true, scoped: true})
	waitReady(t, eng, "python", 1)
	mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	waitReady(t, eng, "python", 1)
	if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"}); !errors.Is(err, sandbox.ErrLimit) {
		t.Errorf("one sandbox more than max_sandboxes: got %v, want ErrLimit (a claimed pool sandbox counts, a ready one does not)", err)
	}
}

func TestPoolDrainsWhilePaused(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(2, "python"), run: true})
	waitReady(t, eng, "python", 2)
	if err := te.st.SetPaused(true); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pool to drain while paused", 30*time.Second, func() bool {
		return eng.PoolReady("python") == 0 && len(ownContainers(t, te, eng, true)) == 0
	})
	if _, err := eng.Create(context.Background(), sandbox.CreateRequest{}); !errors.Is(err, sandbox.ErrPaused) {
		t.Errorf("create while paused: got %v, want ErrPaused", err)
	}
	// That no refill starts while paused, tick after tick, is engine
	// logic: TestFakePoolStaysEmptyWhilePaused.
	if err := te.st.SetPaused(false); err != nil {
		t.Fatal(err)
	}
	waitReady(t, eng, "python", 2)
}

func TestPoolFollowsConfigReload(t *testing.T) {
	testenv.Docker(t, testenv.NodeImage)
	path := filepath.Join(t.TempDir(), "config.toml")
	write := func(size int, langs string) {
		t.Helper()
		text := fmt.Sprintf("[images]\npython = %q\njavascript = %q\nbash = %q\npull = \"never\"\n\n[pool]\nsize = %d\nlanguages = %s\n",
			testenv.PythonImage, testenv.NodeImage, testenv.PythonImage, size, langs)
		if err := os.WriteFile(path, []byte(testenv.WithRuntime(text)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(1, `["python"]`)
	w, err := config.NewWatcher(path, 100*time.Millisecond, testenv.Logger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); w.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	eng, te := newEngineWith(t, engineOptions{watcher: w, run: true})
	waitReady(t, eng, "python", 1)

	write(2, `["javascript"]`)
	// A modification time the watcher cannot take for the old one's.
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(path, later, later); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the pool to follow the new config", 60*time.Second, func() bool {
		if eng.PoolReady("javascript") != 2 || eng.PoolReady("python") != 0 {
			return false
		}
		langs := map[string]int{}
		for _, c := range ownContainers(t, te, eng, true) {
			langs[c.Labels[backend.LabelLanguage]]++
		}
		return cmp.Equal(map[string]int{"javascript": 2}, langs)
	})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "javascript"})
	runCells(t, eng, sb.ID, "", []cell{{code: "6 * 7", want: cellOut{Result: "42"}}})
}

func TestPoolRemovedOnClose(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(2, "python"), run: true})
	waitReady(t, eng, "python", 2)
	mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := eng.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if left := ownContainers(t, te, eng, false); len(left) != 0 {
		names := make([]string, 0, len(left))
		for n := range left {
			names = append(names, n)
		}
		t.Errorf("containers left after Close: %v", names)
	}
	if _, err := eng.Create(ctx, sandbox.CreateRequest{}); !errors.Is(err, sandbox.ErrClosed) {
		t.Errorf("create after close: got %v, want ErrClosed", err)
	}
}

func TestReapClaimedPoolSandboxByRecordExpiry(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(2, "python"), run: true})
	waitReady(t, eng, "python", 2)
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	var rec state.Record
	waitFor(t, "the claimed sandbox's record", 10*time.Second, func() bool {
		r, err := te.st.ReadRecord(sb.ID)
		rec = r
		return err == nil && r.Claimed
	})
	rec.ExpiresAt = time.Now().Add(-time.Hour)
	if err := te.st.WriteRecord(rec); err != nil {
		t.Fatal(err)
	}
	unclaimed := poolIDs(t, te, eng)
	// Another server's reaper of this installation: the owner is alive
	// (its lock is held), so only its record of last use can expire it.
	res, err := inventory.Reap(context.Background(), te.be, te.st, inventory.ReapRequest{Self: "another-owner"})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{sb.ID}, res.Removed); diff != "" {
		t.Errorf("reaped (-want +got):\n%s", diff)
	}
	for id := range unclaimed {
		if _, err := te.cli.ContainerInspect(context.Background(), backend.PoolNamePrefix+id); err != nil {
			t.Errorf("unclaimed pool sandbox %s was reaped: %v", id, err)
		}
	}
}

func TestRunCodeOneShotFromPool(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(1, "python"), run: true})
	waitReady(t, eng, "python", 1)
	pooled := poolIDs(t, te, eng)
	res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Code: "6 * 7"})
	if err != nil {
		t.Fatal(err)
	}
	if !res.OneShot || !pooled[res.SandboxID] || res.Result != "42" {
		t.Errorf("want a one-shot run in the pooled sandbox giving 42, got %+v (pool %v)", res, pooled)
	}
	waitFor(t, "the one-shot sandbox's removal", 30*time.Second, func() bool {
		_, err := te.cli.ContainerInspect(context.Background(), backend.ContainerName(res.SandboxID))
		return cerrdefs.IsNotFound(err)
	})
}

func TestConcurrentOneShotRunCode(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{edit: withPool(1, "python"), run: true, scoped: true})
	const n = 20 // twice max_sandboxes: the later ones wait for a slot
	var wg sync.WaitGroup
	start := time.Now()
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Code: fmt.Sprintf("print(%d)", i)})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			if res.Stdout != fmt.Sprintf("%d\n", i) || res.ExitCode != 0 {
				t.Errorf("run %d: %+v", i, res)
			}
		}()
	}
	wg.Wait()
	t.Logf("%d concurrent one-shot runs took %v", n, time.Since(start))
}

func TestPoolMissingImageDoesNotBlockOthers(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: func(c *config.Config) {
		withPool(1, "javascript", "python")(c)
		c.Images.JavaScript = "mcp-sandbox-test/absent:1" // pull = never
	}, run: true})
	waitReady(t, eng, "python", 1)
	// How failed refills back off over many ticks is engine logic:
	// TestFakePoolMissingImageDoesNotBlockOthers.
	if n := eng.PoolReady("javascript"); n != 0 {
		t.Errorf("%d javascript sandboxes ready from an absent image", n)
	}
	if n := len(ownContainers(t, te, eng, true)); n != 1 {
		t.Errorf("%d pool containers, want the python one only", n)
	}
	if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "javascript"}); !errors.Is(err, backend.ErrImageNotFound) {
		t.Errorf("create javascript: got %v, want ErrImageNotFound", err)
	}
}

// TestPoolReplacesStoppedSandbox: a ready sandbox whose container is
// killed from outside leaves the pool (the engine's watcher of it says so,
// not a listing of the engine) and a fresh one takes its place; a claim
// never gets the dead one.
func TestPoolReplacesStoppedSandbox(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: withPool(1, "python"), run: true, scoped: true})
	waitReady(t, eng, "python", 1)
	var killed string
	for name, c := range ownContainers(t, te, eng, true) {
		killed = name
		if err := te.cli.ContainerKill(context.Background(), c.ID, "KILL"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a fresh pooled sandbox in place of the killed one", time.Minute, func() bool {
		s := eng.PoolStats("python")
		_, old := ownContainers(t, te, eng, true)[killed]
		return s.Made == 2 && s.Ready == 1 && !old
	})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python"})
	if res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{SandboxID: sb.ID, Code: "print(1)"}); err != nil || res.Stdout != "1\n" {
		t.Errorf("run in the sandbox claimed after the kill: %+v, %v", res, err)
	}
}
