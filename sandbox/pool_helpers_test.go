package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// engineOptions shape newEngineWith's engine.
type engineOptions struct {
	edit func(*config.Config)
	// wrap, if set, wraps the Docker backend (to inject faults).
	wrap func(*docker.Backend) backend.Backend
	// run starts Engine.Run (expiry and the warm pool) for the test.
	run bool
	// watcher, if set, supplies the config instead of a static one.
	watcher *config.Watcher
	// scoped makes the engine see only its own containers, so counts under
	// max_sandboxes do not depend on other tests sharing the Docker engine.
	scoped bool
	// ttlUnit shortens ttl_minutes for expiry tests.
	ttlUnit time.Duration
	// usageInterval sets how often Run samples usage.
	usageInterval time.Duration
}

// scopedBackend is the real backend with List limited to one owner's
// containers.
type scopedBackend struct {
	*docker.Backend
	owner string
}

func (s scopedBackend) List(ctx context.Context) ([]backend.ContainerInfo, error) {
	all, err := s.Backend.List(ctx)
	var own []backend.ContainerInfo
	for _, c := range all {
		if c.Labels[backend.LabelOwner] == s.owner {
			own = append(own, c)
		}
	}
	return own, err
}

// testEngine is an engine under test and what it runs on.
type testEngine struct {
	cli *client.Client
	st  *state.Store
	be  *docker.Backend
}

// newEngineWith returns an engine on the real Docker engine; everything it
// made is removed when the test ends.
func newEngineWith(t *testing.T, o engineOptions) (*sandbox.Engine, testEngine) {
	t.Helper()
	cli := testenv.Docker(t, testenv.PythonImage)
	w := o.watcher
	if w == nil {
		cfg := testenv.Config(t)
		if o.edit != nil {
			o.edit(cfg)
		}
		w = config.Static(cfg)
	}
	st, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	be := docker.New(cli, testenv.Logger(t))
	var backend backend.Backend = be
	owner := fmt.Sprintf("test%d", time.Now().UnixNano())
	switch {
	case o.wrap != nil:
		backend = o.wrap(be)
	case o.scoped:
		backend = scopedBackend{Backend: be, owner: owner}
	}
	eng := sandbox.NewEngine(sandbox.Options{
		Backend: backend, Config: w, State: st, Log: testenv.Logger(t), OwnerID: owner, TickInterval: 200 * time.Millisecond, TTLUnit: o.ttlUnit,
		UsageInterval: o.usageInterval,
	})
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := eng.Close(ctx); err != nil {
			t.Errorf("close engine: %v", err)
		}
	})
	if o.run {
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			eng.Run(ctx)
		}()
		t.Cleanup(func() { cancel(); <-done }) // runs before Close
	}
	return eng, testEngine{cli: cli, st: st, be: be}
}

// withPool sets the warm pool's size and languages.
func withPool(size int, langs ...string) func(*config.Config) {
	return func(c *config.Config) { c.Pool.Size, c.Pool.Languages = size, langs }
}

// waitFor polls cond until it holds or the timeout passes.
func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitReady(t *testing.T, eng *sandbox.Engine, lang string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d ready %s sandboxes in the pool", n, lang), 60*time.Second, func() bool { return eng.PoolReady(lang) == n })
}

// ownContainers lists the containers of eng's owner by name; pool ones
// only, if poolOnly.
func ownContainers(t *testing.T, te testEngine, eng *sandbox.Engine, poolOnly bool) map[string]container.Summary {
	t.Helper()
	f := filters.NewArgs(filters.Arg("label", backend.LabelOwner+"="+eng.Owner()))
	list, err := te.cli.ContainerList(context.Background(), container.ListOptions{All: true, Filters: f})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]container.Summary{}
	for _, c := range list {
		name := strings.TrimPrefix(c.Names[0], "/")
		if poolOnly && !strings.HasPrefix(name, backend.PoolNamePrefix) {
			continue
		}
		out[name] = c
	}
	return out
}

func poolIDs(t *testing.T, te testEngine, eng *sandbox.Engine) map[string]bool {
	t.Helper()
	ids := map[string]bool{}
	for _, c := range ownContainers(t, te, eng, true) {
		ids[c.Labels[backend.LabelID]] = true
	}
	return ids
}
