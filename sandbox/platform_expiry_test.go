package sandbox_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// expiringBackend is the fake with a platform that ends sandboxes by
// itself (an Expirer, as Kubernetes' Sandbox objects are): it records each
// sandbox's platform expiry, and ends the sandbox when that passes.
type expiringBackend struct {
	*fake.Backend
	fixed bool

	mu    sync.Mutex
	at    map[string]time.Time
	calls int
}

func (b *expiringBackend) Expire(ctx context.Context, id string, at time.Time) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.calls++
	if b.fixed {
		return backend.ErrFixedExpiry
	}
	b.at[id] = at
	return nil
}

func (b *expiringBackend) expiry(id string) (time.Time, int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.at[id], b.calls
}

func expiringEngine(t *testing.T, be *expiringBackend) *sandbox.Engine {
	t.Helper()
	cfg := config.Default()
	cfg.Source = "test-config.toml"
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull, cfg.Pool.Size = "never", 0
	cfg.Limits.MaxExecTimeoutSeconds = 4 * 3600
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), OwnerID: "expiry-owner", TickInterval: fakeTick, UsageInterval: fakeTick})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		eng.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		_ = eng.Close(context.Background())
	})
	return eng
}

// A sandbox used for hours, and one busy for hours, keep a platform expiry
// ahead of the engine's own (so the platform never ends a sandbox the
// engine keeps), for one update per quarter TTL; idle, the engine's own
// expiry ends it first.
func TestPlatformExpiryFollowsUse(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := &expiringBackend{Backend: fake.New(), at: map[string]time.Time{}}
		eng := expiringEngine(t, be)
		ctx := context.Background()
		const ttl = 30 * time.Minute
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash", TTLMinutes: 30})
		if err != nil {
			t.Fatal(err)
		}
		advance(fakeTick + time.Second)
		if at, _ := be.expiry(sb.ContainerID); at.Before(time.Now().Add(ttl)) {
			t.Fatalf("platform expiry after create: %v, want past the engine's (%v)", at, time.Now().Add(ttl))
		}
		// Used every 10 minutes for 3 hours.
		for i := 0; i < 18; i++ {
			if _, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "true"}); err != nil {
				t.Fatalf("exec after %d uses: %v", i, err)
			}
			used := time.Now()
			advance(10 * time.Minute)
			if at, _ := be.expiry(sb.ContainerID); !at.After(used.Add(ttl)) {
				t.Fatalf("after use %d: platform expiry %v is not past the engine's %v", i, at, used.Add(ttl))
			}
		}
		_, calls := be.expiry(sb.ContainerID)
		if calls > 3*60/int(ttl/4/time.Minute)+2 {
			t.Errorf("%d platform updates for 3 hours of use, want about one per %v", calls, ttl/4)
		}
		// Busy for 2 hours, unused: the platform's expiry stays ahead.
		done := make(chan error, 1)
		go func() {
			_, err := eng.Exec(ctx, sb.ID, sandbox.ExecRequest{Command: "sleep 7200", TimeoutSeconds: 3 * 3600})
			done <- err
		}()
		for i := 0; i < 11; i++ {
			advance(10 * time.Minute)
			if at, _ := be.expiry(sb.ContainerID); !at.After(time.Now().Add(ttl)) {
				t.Fatalf("busy for %d min: platform expiry %v, want past now + TTL", (i+1)*10, at)
			}
		}
		advance(15 * time.Minute)
		if err := <-done; err != nil {
			t.Fatalf("the long command: %v", err)
		}
		// Idle: the engine's own expiry removes it before the platform's.
		last, _ := be.expiry(sb.ContainerID)
		advance(ttl + 2*fakeTick)
		if _, err := eng.Get(sb.ID); err == nil {
			t.Fatal("the idle sandbox is still there after its TTL")
		}
		if !time.Now().Before(last) {
			t.Errorf("the platform's expiry %v came before the engine's own", last)
		}
	})
}

// A backend that cannot move the expiry is asked once, not at every tick.
func TestPlatformExpiryFixed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		be := &expiringBackend{Backend: fake.New(), at: map[string]time.Time{}, fixed: true}
		eng := expiringEngine(t, be)
		if _, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "bash"}); err != nil {
			t.Fatal(err)
		}
		advance(10 * fakeTick)
		if _, calls := be.expiry(""); calls != 1 {
			t.Errorf("%d calls to a backend whose expiry is fixed, want 1", calls)
		}
	})
}
