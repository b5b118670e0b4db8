package sandbox_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// burst fires n one-shot run_code calls at once and checks each answer.
func burst(t *testing.T, eng *sandbox.Engine, n int) {
	t.Helper()
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := eng.RunCode(context.Background(), sandbox.RunCodeRequest{Code: fmt.Sprintf("print(%d)", i)})
			if err != nil {
				t.Errorf("run %d: %v", i, err)
				return
			}
			if !res.OneShot || res.Stdout != fmt.Sprintf("%d\n", i) || res.ExitCode != 0 {
				t.Errorf("run %d: %+v", i, res)
			}
		}()
	}
	wg.Wait()
}

// A burst of one-shot runs against a pool of one makes the pool grow (up
// to max_size), so the next burst is served from it; once idle, it
// shrinks back to its size and removes the extra containers.
func TestPoolGrowsInBurstAndShrinksWhenIdle(t *testing.T) {
	const n, most = 10, 6
	eng, te := newEngineWith(t, engineOptions{edit: func(c *config.Config) {
		withPool(1, "python")(c)
		c.Pool.MaxSize, c.Pool.IdleSeconds = most, 2
		c.Limits.MaxSandboxes = 2 * n
	}, run: true, scoped: true})
	waitReady(t, eng, "python", 1)

	burst(t, eng, n)
	if s := eng.PoolStats("python"); s.Claimed < 1 || s.Claimed >= n {
		t.Errorf("after the first burst: %+v; want the one ready sandbox claimed and most runs missing the pool", s)
	}
	// The misses grow its target to max_size.
	waitFor(t, "the pool's target to grow", time.Minute, func() bool { return eng.PoolStats("python").Target == most })
	// It fills up to max_size (several at a time), and stays so while idle_seconds run.
	waitFor(t, "the grown pool", 2*time.Minute, func() bool { return eng.PoolStats("python").Ready == most })
	if got := len(ownContainers(t, te, eng, true)); got < most {
		t.Errorf("%d pool containers on the engine, want at least %d", got, most)
	}

	// The next burst is served from the grown pool.
	before := eng.PoolStats("python")
	burst(t, eng, n)
	after2 := eng.PoolStats("python")
	if served := after2.Claimed - before.Claimed; served < most {
		t.Errorf("second burst: %d of %d runs served from the pool, want at least %d (%+v)", served, n, most, after2)
	}

	// Idle: it shrinks back to one, on the engine too.
	waitFor(t, "the pool to shrink back to its size", 2*time.Minute, func() bool {
		s := eng.PoolStats("python")
		return s.Target == 1 && s.Ready == 1 && len(ownContainers(t, te, eng, true)) == 1
	})
	t.Logf("pool: %+v", eng.PoolStats("python"))
}

// A request the pool could not serve anyway (its own limits) does not make
// the pool grow.
func TestPoolDoesNotGrowForOtherSettings(t *testing.T) {
	eng, _ := newEngineWith(t, engineOptions{edit: func(c *config.Config) {
		withPool(1, "python")(c)
		c.Pool.MaxSize = 4
	}, run: true, scoped: true})
	waitReady(t, eng, "python", 1)
	for range 2 {
		sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", Env: map[string]string{"A": "1"}})
		if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	if s := eng.PoolStats("python"); s.Target != 1 || s.Claimed != 0 {
		t.Errorf("pool after two creates with their own env: %+v, want target 1 and nothing claimed", s)
	}
}
