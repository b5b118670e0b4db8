package sandbox_test

// The engine's own logic — the warm pool, expiry, reaping, stop, limits
// and error reporting — on the in-memory backend (sandbox/backend/fake),
// inside testing/synctest bubbles: the engine's tickers and timers run on
// the bubble's clock, which moves only when every goroutine in the bubble
// waits, so minutes of engine time pass in microseconds and nothing is
// timed. The tests on the real engine (pool_test.go, engine_test.go, …)
// prove the same paths on Docker.

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// fakeTick is the engine's housekeeping period in these tests (its
// default).
const fakeTick = 5 * time.Second

// fakeEngine returns an engine on a fresh fake backend, running (expiry
// and the pool) until the test ends, then closed. Call it inside a bubble.
func fakeEngine(t *testing.T, st *state.Store, edit func(*config.Config)) (*sandbox.Engine, *fake.Backend) {
	t.Helper()
	return fakeEngineTick(t, st, fakeTick, edit)
}

// fakeEngineTick is fakeEngine with another housekeeping period.
func fakeEngineTick(t *testing.T, st *state.Store, tick time.Duration, edit func(*config.Config)) (*sandbox.Engine, *fake.Backend) {
	t.Helper()
	return fakeEngineOn(t, fake.New(), st, tick, edit)
}

// fakeEngineOn is fakeEngineTick on a backend the test has set up (its
// faults and delays in force from the engine's first call).
func fakeEngineOn(t *testing.T, be *fake.Backend, st *state.Store, tick time.Duration, edit func(*config.Config)) (*sandbox.Engine, *fake.Backend) {
	t.Helper()
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size = 0
	if edit != nil {
		edit(cfg)
	}
	eng := sandbox.NewEngine(sandbox.Options{
		Backend: be, Config: config.Static(cfg), State: st, OwnerID: "fake-owner", TickInterval: tick, UsageInterval: tick,
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		if err := eng.Close(context.Background()); err != nil {
			t.Errorf("close engine: %v", err)
		}
		for _, c := range be.Containers() {
			if c.Spec.Labels[backend.LabelOwner] == eng.Owner() && c.Spec.Labels[backend.LabelInstallation] == eng.Installation() {
				t.Errorf("container left after Close: %+v", c)
			}
		}
	})
	return eng, be
}

// advance lets d pass on the bubble's clock, then waits for the engine's
// goroutines to settle.
func advance(d time.Duration) {
	<-time.After(d)
	synctest.Wait()
}

// poolContainers returns the fake's unclaimed pool containers by name.
func poolContainers(be *fake.Backend) map[string]fake.Container {
	out := map[string]fake.Container{}
	for _, c := range be.Containers() {
		if strings.HasPrefix(c.Name, backend.PoolNamePrefix) {
			out[c.Name] = c
		}
	}
	return out
}

func TestFakePoolRefillsAfterClaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Pool.Size, c.Pool.Languages = 2, []string{"python"} })
		synctest.Wait()
		if n := eng.PoolReady("python"); n != 2 || len(poolContainers(be)) != 2 {
			t.Fatalf("pool ready %d, %d pool containers; want 2 of each", n, len(poolContainers(be)))
		}
		pooled := poolContainers(be)
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python", Client: "test"})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pooled[backend.PoolNamePrefix+sb.ID]; !ok {
			t.Errorf("created %s, not one of the pool's %v", sb.ID, pooled)
		}
		var renamed bool
		for _, c := range be.Containers() {
			renamed = renamed || (c.ID == sb.ContainerID && c.Name == backend.ContainerName(sb.ID))
		}
		if !renamed {
			t.Errorf("the claimed container was not renamed to %s", backend.ContainerName(sb.ID))
		}
		synctest.Wait() // the claim poked the pool: it refills at once
		if s := eng.PoolStats("python"); s.Ready != 2 || s.Made != 3 || s.Claimed != 1 {
			t.Errorf("after a claim: %+v; want 2 ready, 3 made, 1 claimed", s)
		}
		// A request with its own environment never takes a pooled one.
		sb2, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python", Env: map[string]string{"A": "b"}})
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := pooled[backend.PoolNamePrefix+sb2.ID]; ok || eng.PoolStats("python").Claimed != 1 {
			t.Errorf("a request with env was served from the pool: %+v", eng.PoolStats("python"))
		}
	})
}

func TestFakePoolGrowsInBurstAndShrinksWhenIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const n, most, idle = 10, 6, 60
		// Creations take a second, so that a burst finds the pool empty.
		be := fake.New()
		be.Delay(fake.OpCreate, time.Second)
		eng, _ := fakeEngineOn(t, be, nil, fakeTick, func(c *config.Config) {
			c.Pool.Size, c.Pool.Languages, c.Pool.MaxSize, c.Pool.IdleSeconds = 1, []string{"python"}, most, idle
			c.Limits.MaxSandboxes = 3 * n
		})
		advance(time.Second)
		if eng.PoolReady("python") != 1 {
			t.Fatalf("pool not filled: %+v", eng.PoolStats("python"))
		}
		burst := func() {
			var wg sync.WaitGroup
			for range n {
				wg.Go(func() {
					if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"}); err != nil {
						t.Errorf("create: %v", err)
					}
				})
			}
			wg.Wait()
		}
		burst()
		if s := eng.PoolStats("python"); s.Claimed != 1 {
			t.Errorf("after the first burst: %+v; want the one ready sandbox claimed", s)
		}
		advance(fakeTick) // the misses grew the target; fills run four at a time
		advance(fakeTick)
		if s := eng.PoolStats("python"); s.Target != most || s.Ready != most || len(poolContainers(be)) != most {
			t.Fatalf("grown pool: %+v, %d pool containers; want %d ready", s, len(poolContainers(be)), most)
		}
		before := eng.PoolStats("python")
		burst()
		if served := eng.PoolStats("python").Claimed - before.Claimed; served != most {
			t.Errorf("second burst: %d of %d served from the pool, want %d", served, n, most)
		}
		// Busy within idle_seconds: the pool keeps its size.
		advance(idle * time.Second / 2)
		if s := eng.PoolStats("python"); s.Target != most {
			t.Errorf("half-way through idle_seconds: %+v; want the target kept at %d", s, most)
		}
		// Idle past idle_seconds: back to its size, containers removed.
		advance(idle * time.Second)
		if s := eng.PoolStats("python"); s.Target != 1 || s.Ready != 1 || len(poolContainers(be)) != 1 {
			t.Errorf("after idle_seconds: %+v, %d pool containers; want 1", s, len(poolContainers(be)))
		}
	})
}

func TestFakePoolReplacesOldSandboxes(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		_, be := fakeEngine(t, nil, func(c *config.Config) { c.Pool.Size, c.Pool.Languages = 1, []string{"python"} })
		synctest.Wait()
		first := poolContainers(be)
		advance(5*time.Hour + 59*time.Minute)
		if got := poolContainers(be); fmt.Sprint(got) != fmt.Sprint(first) {
			t.Errorf("the pooled sandbox was replaced before its maximum age: %v, then %v", first, got)
		}
		advance(time.Minute + fakeTick)
		got := poolContainers(be)
		for name := range first {
			if _, ok := got[name]; ok || len(got) != 1 {
				t.Errorf("after six hours the pool holds %v; want one fresh sandbox instead of %s", got, name)
			}
		}
	})
}

func TestFakePoolRefillBacksOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := fake.New()
		be.Fail(fake.OpCreate, -1, errors.New("injected: create fails"))
		eng, _ := fakeEngineOn(t, be, nil, fakeTick, func(c *config.Config) { c.Pool.Size, c.Pool.Languages = 1, []string{"python"} })
		advance(time.Minute)
		// Waits double from a second to a minute: about a dozen tries in
		// ten minutes, not one per tick (120).
		if calls := be.Calls(fake.OpCreate); calls < 5 || calls > 20 {
			t.Errorf("%d creations tried in ten minutes of failures; want back-off (5 to 20)", calls)
		}
		be.Heal()
		advance(time.Minute + fakeTick)
		if eng.PoolReady("python") != 1 {
			t.Errorf("pool not refilled within the longest back-off once creations work: %+v", eng.PoolStats("python"))
		}
	})
}

func TestFakePoolStaysEmptyWhilePaused(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := state.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		eng, be := fakeEngine(t, st, func(c *config.Config) { c.Pool.Size, c.Pool.Languages = 2, []string{"python"} })
		synctest.Wait()
		if eng.PoolReady("python") != 2 {
			t.Fatalf("pool not filled: %+v", eng.PoolStats("python"))
		}
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		if err := st.SetPaused(true); err != nil {
			t.Fatal(err)
		}
		creates := be.Calls(fake.OpCreate)
		advance(fakeTick)
		if n := len(be.Containers()); n != 0 || eng.PoolReady("python") != 0 {
			t.Errorf("paused: %d containers left, pool %+v; want the pool drained and the sandbox stopped", n, eng.PoolStats("python"))
		}
		if _, err := eng.Get(sb.ID); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("Get while paused = %v, want ErrNotFound", err)
		}
		advance(10 * fakeTick)
		if n := be.Calls(fake.OpCreate) - creates; n != 0 {
			t.Errorf("%d containers made while paused", n)
		}
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{}); !errors.Is(err, sandbox.ErrPaused) {
			t.Errorf("create while paused = %v, want ErrPaused", err)
		}
		if err := st.SetPaused(false); err != nil {
			t.Fatal(err)
		}
		advance(fakeTick)
		if eng.PoolReady("python") != 2 {
			t.Errorf("pool after resuming: %+v", eng.PoolStats("python"))
		}
	})
}

func TestFakePoolMissingImageDoesNotBlockOthers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) {
			c.Pool.Size, c.Pool.Languages = 1, []string{"javascript", "python"}
			c.Images.JavaScript = "fake/absent:1"
		})
		advance(time.Minute)
		if s := eng.PoolStats("python"); s.Ready != 1 || s.Made != 1 {
			t.Errorf("python pool %+v; want its one sandbox, made once", s)
		}
		if n := eng.PoolReady("javascript"); n != 0 {
			t.Errorf("%d javascript sandboxes ready from an absent image", n)
		}
		// One image check per fill: the javascript ones back off (a
		// second, doubling to a minute), not one per tick (120).
		if n := be.Calls(fake.OpEnsureImage); n < 5 || n > 20 {
			t.Errorf("%d image checks in ten minutes; want back-off (5 to 20)", n)
		}
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "javascript"}); !errors.Is(err, backend.ErrImageNotFound) {
			t.Errorf("create javascript = %v, want ErrImageNotFound", err)
		}
	})
}

func TestFakeIdleExpiry(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, nil)
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash", TTLMinutes: 2})
		if err != nil {
			t.Fatal(err)
		}
		if want := time.Now().Add(2 * time.Minute); !sb.ExpiresAt().Equal(want) {
			t.Errorf("ExpiresAt = %v, want %v", sb.ExpiresAt(), want)
		}
		advance(time.Minute)
		// Use renews the idle time.
		res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "echo hi"})
		if err != nil || res.Stdout != "hi\n" {
			t.Fatalf("exec = %+v, %v", res, err)
		}
		advance(time.Minute + fakeTick)
		if _, err := eng.Get(sb.ID); err != nil {
			t.Fatalf("expired although used a minute ago: %v", err)
		}
		// Busy for longer than its TTL: kept while the command runs.
		done := make(chan error, 1)
		go func() {
			res, err := eng.Exec(context.Background(), sb.ID, sandbox.ExecRequest{Command: "sleep 300; echo done", TimeoutSeconds: 600})
			if err == nil && res.Stdout != "done\n" {
				err = fmt.Errorf("exec = %+v", res)
			}
			done <- err
		}()
		advance(5 * time.Minute)
		if err := <-done; err != nil {
			t.Fatalf("a busy sandbox expired: %v", err)
		}
		advance(2*time.Minute - fakeTick)
		if _, err := eng.Get(sb.ID); err != nil {
			t.Fatalf("expired before two idle minutes after its command: %v", err)
		}
		advance(2 * fakeTick)
		if _, err := eng.Get(sb.ID); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("Get after two idle minutes = %v, want ErrNotFound", err)
		}
		if left := be.Containers(); len(left) != 0 {
			t.Errorf("expired sandbox's container still there: %+v", left)
		}
	})
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestFakeStopRemovesInBackground(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, nil)
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		be.Delay(fake.OpRemove, 20*time.Second)
		start := time.Now()
		if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Stop waited %v for the removal", d)
		}
		if _, err := eng.Get(sb.ID); !errors.Is(err, sandbox.ErrNotFound) {
			t.Errorf("Get right after Stop = %v, want ErrNotFound", err)
		}
		if len(be.Containers()) != 1 {
			t.Errorf("the container went before its removal ran: %+v", be.Containers())
		}
		// A stopped sandbox no longer counts against max_sandboxes.
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"}); err != nil {
			t.Errorf("create while the last one is being removed: %v", err)
		}
		advance(20 * time.Second)
		if len(be.Containers()) != 1 {
			t.Errorf("after the removal: %+v; want only the second sandbox", be.Containers())
		}

		// A removal that fails twice is tried again, a second apart.
		be.Delay(fake.OpRemove, 0)
		sb3, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		be.Fail(fake.OpRemove, 2, errors.New("injected: remove fails"))
		calls := be.Calls(fake.OpRemove)
		if _, err := eng.Stop(context.Background(), sb3.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		advance(2 * time.Second)
		if got := be.Calls(fake.OpRemove) - calls; got != 3 {
			t.Errorf("%d removal tries, want 3", got)
		}
		for _, c := range be.Containers() {
			if c.ID == sb3.ContainerID {
				t.Errorf("the container is still there after the third try")
			}
		}
	})
}

func TestFakeLimitsCarriedIntoSpec(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Docker.Runtime = "runsc" })
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash", MemoryMB: 300, CPUs: 0.5, Pids: 64, Client: "cli"})
		if err != nil {
			t.Fatal(err)
		}
		cs := be.Containers()
		if len(cs) != 1 {
			t.Fatalf("containers %+v", cs)
		}
		s := cs[0].Spec
		if s.MemoryBytes != 300<<20 || s.NanoCPUs != 5e8 || s.Pids != 64 || s.Network != "none" || s.Runtime != "runsc" {
			t.Errorf("spec limits %d/%d/%d, network %q, runtime %q", s.MemoryBytes, s.NanoCPUs, s.Pids, s.Network, s.Runtime)
		}
		l := s.Labels
		if l[backend.LabelMemoryMB] != "300" || l[backend.LabelCPUs] != "0.5" || l[backend.LabelPids] != "64" ||
			l[backend.LabelID] != sb.ID || l[backend.LabelOwner] != eng.Owner() || l[backend.LabelClient] != "cli" {
			t.Errorf("labels %v", l)
		}
		if s.WorkspaceMB != sb.Limits.WorkspaceMB || s.CacheUser == "" || s.User == "" {
			t.Errorf("spec %+v", s)
		}
		// Above the policy: refused before anything is made.
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash", MemoryMB: 1 << 20}); err == nil {
			t.Error("a memory limit above the policy was accepted")
		}
		if be.Calls(fake.OpCreate) != 1 {
			t.Errorf("%d creations, want 1", be.Calls(fake.OpCreate))
		}
	})
}

func TestFakeErrorsReported(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Limits.MaxSandboxes = 2 })
		ctx := context.Background()

		be.SetGone(true)
		if _, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"}); !errors.Is(err, backend.ErrDockerUnreachable) {
			t.Errorf("create with the engine gone = %v, want ErrDockerUnreachable", err)
		}
		be.SetGone(false)
		be.Fail(fake.OpCreate, 1, fmt.Errorf("%w: injected", backend.ErrImageNotFound))
		if _, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"}); !errors.Is(err, backend.ErrImageNotFound) {
			t.Errorf("failed create = %v, want the backend's error", err)
		}

		a, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		b, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"}); !errors.Is(err, sandbox.ErrLimit) {
			t.Errorf("third create under max_sandboxes 2 = %v, want ErrLimit", err)
		}

		// A call running when the container is removed from outside ends,
		// and later calls say what happened.
		done := make(chan error, 1)
		go func() {
			_, err := eng.Exec(ctx, a.ID, sandbox.ExecRequest{Command: "sleep 1000"})
			done <- err
		}()
		synctest.Wait()
		be.Vanish(a.ContainerID)
		synctest.Wait()
		select {
		case err := <-done:
			if err == nil {
				t.Error("exec in a vanished sandbox succeeded")
			}
		default:
			t.Error("exec still running after its container vanished")
		}
		if _, err := eng.Get(a.ID); !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "removed from outside") {
			t.Errorf("Get after the container vanished = %v", err)
		}

		be.Exit(b.ContainerID, backend.ContainerExit{ExitCode: 137, OOMKilled: true})
		synctest.Wait()
		if _, err := eng.Exec(ctx, b.ID, sandbox.ExecRequest{Command: "true"}); !errors.Is(err, sandbox.ErrNotFound) || !strings.Contains(err.Error(), "memory") {
			t.Errorf("exec after an OOM kill = %v", err)
		}
		// Both slots are free again.
		if _, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash"}); err != nil {
			t.Errorf("create after both died: %v", err)
		}
	})
}

// A pool claim that completes while another create's admission is listing
// the engine counts once against max_sandboxes, not twice (as creating and
// as listed): two creates under a limit of two both succeed.
func TestFakeLimitCountsClaimOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) {
			c.Pool.Size, c.Pool.Languages = 2, []string{"python"}
			c.Limits.MaxSandboxes = 2
		})
		synctest.Wait()
		be.Delay(fake.OpList, time.Second)
		errs := make(chan error, 2)
		create := func() {
			_, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"})
			errs <- err
		}
		go create()                          // lists from 0 s to 1 s, then claims
		<-time.After(500 * time.Millisecond) // on the bubble's clock
		go create()                          // lists from 0.5 s to 1.5 s, and sees the first claimed
		for range 2 {
			if err := <-errs; err != nil {
				t.Errorf("create under max_sandboxes 2: %v", err)
			}
		}
	})
}

// max_sandboxes is for the whole installation: another server's sandboxes
// of the same state directory (every AI client runs its own) fill it too,
// and the refusal says whose they are and how to stop them, since this
// server's sandbox_list does not show them.
func TestFakeLimitNamesOtherServers(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		limit := func(c *config.Config) { c.Limits.MaxSandboxes = 2 }
		st, _ := openState(t) // one installation: the limit is its own
		mine, be := fakeEngine(t, st, limit)
		cfg := config.Default()
		cfg.Source = "other-config.toml"
		cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
		cfg.Images.Pull, cfg.Pool.Size = "never", 0
		limit(cfg)
		other := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), OwnerID: "other-owner", State: st})
		defer other.Close(context.Background())
		ctx := context.Background()

		for range 2 {
			if _, err := other.Create(ctx, sandbox.CreateRequest{Language: "bash"}); err != nil {
				t.Fatal(err)
			}
		}
		_, err := mine.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		for _, want := range []string{"2 sandboxes of this MCP Sandbox installation are running", "all the running ones were made by other servers of this installation", "`mcp-sandbox stop`", "test-config.toml"} {
			if !errors.Is(err, sandbox.ErrLimit) || !strings.Contains(err.Error(), want) {
				t.Errorf("create with the limit filled by another server = %v, want ErrLimit saying %q", err, want)
			}
		}
		if strings.Contains(fmt.Sprint(err), "sandbox_list shows") {
			t.Errorf("refusal points at sandbox_list, which shows none of them: %v", err)
		}

		res, err := other.List(ctx, sandbox.ListRequest{})
		list := res.Sandboxes
		if err != nil || len(list) != 2 {
			t.Fatalf("other server's list = %v, %v", list, err)
		}
		if _, err := other.Stop(ctx, list[0].ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := mine.Create(ctx, sandbox.CreateRequest{Language: "bash"}); err != nil {
			t.Fatal(err)
		}
		_, err = mine.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		for _, want := range []string{"2 sandboxes of this MCP Sandbox installation are running", "1 of the running ones were made by other servers of this installation", "sandbox_stop (sandbox_list shows this server's)"} {
			if !errors.Is(err, sandbox.ErrLimit) || !strings.Contains(err.Error(), want) {
				t.Errorf("create with the limit filled by both = %v, want ErrLimit saying %q", err, want)
			}
		}
		_, err = other.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if !errors.Is(err, sandbox.ErrLimit) || !strings.Contains(err.Error(), "other-config.toml") {
			t.Errorf("other server's create = %v, want ErrLimit naming its config", err)
		}
	})
}

// agentOnCreate is the fake backend declaring backend.AgentOnCreate, as
// the Kubernetes backend does.
type agentOnCreate struct{ *fake.Backend }

func (agentOnCreate) AgentOnCreate() {}

// On a backend.AgentOnCreate backend, Create returns once the sandbox's
// command agent was started (its first command then waits for no start):
// the exec path is decided when Create returns, after the start's
// delayed engine calls; a start slower than 10 s goes on after Create. (The fake's images cannot run the agent, so the
// start ends in "docker exec"; the Kubernetes cluster test sees "agent".)
func TestFakeAgentStartedByCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := fake.New()
		cfg := config.Default()
		cfg.Images.Bash, cfg.Images.Pull, cfg.Pool.Size = fake.DefaultImage, "never", 0
		cfg.Images.Python = "fake/other:1" // tools not looked up yet
		be.AddImage(cfg.Images.Python, fake.Image{})
		eng := sandbox.NewEngine(sandbox.Options{Backend: agentOnCreate{be}, Config: config.Static(cfg), OwnerID: "fake-owner"})
		defer func() {
			if err := eng.Close(context.Background()); err != nil {
				t.Errorf("close engine: %v", err)
			}
		}()
		be.Delay(fake.OpStatPath, time.Second)
		start := time.Now()
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker || !strings.Contains(why, "chmod") {
			t.Errorf("when Create returned the exec path is %q (%s); want it decided by the agent's start", p, why)
		}
		if time.Since(start) == 0 {
			t.Errorf("Create did not wait for the agent's start (its engine calls take a second each)")
		}

		// A start slower than Create's bound (10 s) goes on in the
		// background, and Create returns the sandbox at the bound.
		be.Delay(fake.OpStatPath, 4*time.Second) // six calls: within the start's 45 s
		start = time.Now()
		sb, err = eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 10*time.Second {
			t.Errorf("Create with a slow agent start took %v, want its bound, 10 s", d)
		}
		if p, why := execPath(t, eng, sb.ID); p != "" {
			t.Errorf("the slow start ended before Create returned: %q (%s)", p, why)
		}
		advance(5 * time.Minute)
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker {
			t.Errorf("after the slow start the exec path is %q (%s); want it decided in the background", p, why)
		}
	})
}

// The image's tools are looked up once per image, not per sandbox: a
// second sandbox of the image starts its agent with no look-up (each is
// an exec through the API server on Kubernetes); another image's are
// looked up.
func TestFakeToolsLookedUpOncePerImage(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Images.Python = "fake/other:1" })
		be.AddImage("fake/other:1", fake.Image{})
		stats := []int{}
		for _, lang := range []string{"bash", "bash", "python"} {
			before := be.Calls(fake.OpStatPath)
			if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: lang}); err != nil {
				t.Fatal(err)
			}
			synctest.Wait()
			stats = append(stats, be.Calls(fake.OpStatPath)-before)
		}
		if stats[0] == 0 || stats[1] != 0 || stats[2] != stats[0] {
			t.Errorf("tool look-ups per create (image, same image, another image) = %v; want n, 0, n", stats)
		}
	})
}

// A sandbox made by sandbox_create (not claimed from the pool) has its
// command agent started in the background, so its first command does not
// wait for that start; the create itself does not wait for it, and a
// sandbox stopped while its agent is starting is removed all the same.
// (The fake's images cannot run the agent, so the start ends in "docker
// exec": what shows it ran is that the path is decided before any command.)
func TestFakeAgentWarmedAfterCreate(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		eng, be := fakeEngine(t, nil, func(c *config.Config) { c.Images.Python = "fake/other:1" })
		be.AddImage("fake/other:1", fake.Image{}) // its tools are looked up anew
		be.Delay(fake.OpStatPath, time.Second)
		start := time.Now()
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Create waited %v for the agent", d)
		}
		synctest.Wait()
		if p, why := execPath(t, eng, sb.ID); p != "" {
			t.Errorf("the agent's start ended before its first engine call did: %q (%s)", p, why)
		}
		// Each place the start looks for cat and chmod is one delayed call (within the start's 45 s).
		advance(time.Minute)
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecDocker || !strings.Contains(why, "chmod") {
			t.Errorf("before any command the exec path is %q (%s); want it decided by the agent's start", p, why)
		}

		sb2, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python"})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		be.Delay(fake.OpStatPath, 0)
		if _, err := eng.Stop(context.Background(), sb2.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		advance(time.Minute)
		for _, c := range be.Containers() {
			if c.ID == sb2.ContainerID {
				t.Errorf("the sandbox stopped while its agent started is still there")
			}
		}
	})
}

// A sandbox stopped while its agent is starting ends that start once its
// container is gone: the start must not wait for the engine calls it
// made in the container to time out (under gVisor an exec's stream can
// outlive its removed container), and Close, which waits for it, with it.
// TestStdinCloseRemovesSandboxes's server under gVisor once took 45 s
// (the start's bound) to exit.
func TestFakeStopEndsAgentStart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := fake.New()
		cfg := config.Default()
		cfg.Images.Bash, cfg.Images.Pull, cfg.Pool.Size = fake.DefaultImage, "never", 0
		eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), OwnerID: "fake-owner"})
		be.Delay(fake.OpStatPath, time.Hour) // the start's first call in the container never answers
		sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"})
		if err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if _, err := eng.Stop(context.Background(), sb.ID, sandbox.StopRequest{}); err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		if err := eng.Close(context.Background()); err != nil {
			t.Errorf("close engine: %v", err)
		}
		if d := time.Since(start); d != 0 {
			t.Errorf("Close waited %v for the agent start of a sandbox already removed", d)
		}
	})
}
