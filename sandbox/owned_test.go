package sandbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend/fake"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestFakeRemoveOwner is the watchdog's clean-up of a server that died
// without closing its engine: its sandbox, warm pool and helper go, with
// the engine away for a while at first and a container whose create
// lands after the first pass; another server's sandbox stays.
func TestFakeRemoveOwner(t *testing.T) {
	for _, tc := range []struct {
		name  string
		fault func(be *fake.Backend)
	}{
		{"engine answers", func(*fake.Backend) {}},
		{"list fails three times", func(be *fake.Backend) {
			be.Fail(fake.OpList, 3, fmt.Errorf("%w: injected", backend.ErrDockerUnreachable))
		}},
		{"a remove fails once", func(be *fake.Backend) {
			be.Fail(fake.OpRemove, 1, fmt.Errorf("%w: injected", backend.ErrDockerUnreachable))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) { removeOwnerCase(t, tc.fault) })
		})
	}
}

func removeOwnerCase(t *testing.T, fault func(*fake.Backend)) {
	be := fake.New()
	cfg := config.Default()
	cfg.Images.Python, cfg.Images.JavaScript, cfg.Images.Bash = fake.DefaultImage, fake.DefaultImage, fake.DefaultImage
	cfg.Images.Pull = "never"
	cfg.Pool.Size, cfg.Pool.Languages = 1, []string{"python"}
	eng := sandbox.NewEngine(sandbox.Options{Backend: be, Config: config.Static(cfg), OwnerID: "dead-owner", TickInterval: fakeTick})
	ctx, die := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); eng.Run(ctx) }()
	synctest.Wait()
	sb, err := eng.Create(context.Background(), sandbox.CreateRequest{Language: "python", Client: "test"})
	if err != nil {
		t.Fatal(err)
	}
	synctest.Wait()
	labels := func(owner, id string, extra ...string) map[string]string {
		l := map[string]string{backend.LabelManaged: "true", backend.LabelOwner: owner, backend.LabelID: id}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	be.Put(backend.ContainerSpec{Name: "mcp-sandbox-helper-x", Image: fake.DefaultImage, Labels: labels("dead-owner", sb.ID+"-install", backend.LabelHelper, sb.ID)})
	other := be.Put(backend.ContainerSpec{Name: backend.ContainerName("other"), Image: fake.DefaultImage, Labels: labels("live-owner", "other")})
	// The server dies: its engine is never closed.
	die()
	<-done
	if n := owned(be, "dead-owner"); n < 3 {
		t.Fatalf("%d containers of the dead server before the clean-up; want its sandbox, pool and helper", n)
	}
	fault(be)
	go func() {
		// A create the engine finished after the server died.
		time.Sleep(1200 * time.Millisecond)
		be.Put(backend.ContainerSpec{Name: backend.ContainerName("late"), Image: fake.DefaultImage, Labels: labels("dead-owner", "late")})
	}()
	rctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	removed, err := inventory.RemoveOwner(rctx, be, nil, "dead-owner", nil)
	if err != nil {
		t.Fatalf("RemoveOwner: %v", err)
	}
	if n := owned(be, "dead-owner"); n != 0 {
		t.Errorf("%d containers of the dead server left: %+v", n, be.Containers())
	}
	var kept bool
	for _, c := range be.Containers() {
		kept = kept || c.ID == other
	}
	if !kept {
		t.Error("another server's sandbox was removed")
	}
	want := map[string]bool{sb.ID: true, "late": true}
	for _, id := range removed {
		delete(want, id)
	}
	if len(want) > 0 {
		t.Errorf("removed %v; missing %v", removed, want)
	}
}

// owned counts the containers of owner, helpers included.
func owned(be *fake.Backend, owner string) int {
	n := 0
	for _, c := range be.Containers() {
		if c.Spec.Labels[backend.LabelOwner] == owner {
			n++
		}
	}
	return n
}

// Once a dead server's clean-up has settled, its lock file goes too (it is
// free: its server is gone); a live server's stays.
func TestRemoveOwnerRemovesFreeLockFile(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st, err := state.Open(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		live, err := st.LockServer("live-owner")
		if err != nil {
			t.Fatal(err)
		}
		defer live.Release()
		// A killed server leaves its file, unlocked.
		deadPath := filepath.Join(st.Dir(), "servers", "dead-owner.lock")
		if err := os.WriteFile(deadPath, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, owner := range []string{"dead-owner", "live-owner"} {
			if _, err := inventory.RemoveOwner(context.Background(), fake.New(), st, owner, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := os.Stat(deadPath); !os.IsNotExist(err) {
			t.Errorf("the dead server's lock file is still there (%v)", err)
		}
		if st.ServerGone("live-owner") {
			t.Error("the live server's lock was taken from it")
		}
	})
}
