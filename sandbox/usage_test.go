package sandbox_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// listCall marks the context of the List calls under test, so the
// counting backend can tell their stats calls from the sampler's.
type listCall struct{}

// statsCounter is the real backend counting the stats calls made on behalf
// of a List call.
type statsCounter struct {
	*docker.Backend
	fromList atomic.Int64
	all      atomic.Int64
}

func (s *statsCounter) Usage(ctx context.Context, containerID string) (backend.Usage, error) {
	s.all.Add(1)
	if ctx.Value(listCall{}) != nil {
		s.fromList.Add(1)
	}
	return s.Backend.Usage(ctx, containerID)
}

// TestListAnswersFromSampledUsage: once the background sampler has
// sampled the sandboxes, List answers with their usage and limits without
// a single stats call.
func TestListAnswersFromSampledUsage(t *testing.T) {
	counter := &statsCounter{}
	eng, _ := newEngineWith(t, engineOptions{
		edit: func(c *config.Config) { c.Limits.MaxSandboxes = 100 }, // other tests share the engine
		wrap: func(b *docker.Backend) backend.Backend {
			counter.Backend = b
			return counter
		},
		run: true,
		// One round when asked for (new sandboxes), none on a timer during
		// the test.
		usageInterval: time.Hour,
	})
	ctx := context.Background()
	const n = 5
	want := map[string]inventory.Limits{}
	for i := 0; i < n; i++ {
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
		if err != nil {
			t.Fatal(err)
		}
		want[sb.ID] = sb.Limits
	}
	listCtx := context.WithValue(ctx, listCall{}, true)
	list := func() []inventory.Info {
		t.Helper()
		infos, err := eng.List(listCtx, sandbox.ListRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return infos.Sandboxes
	}
	waitFor(t, "a usage sample of every sandbox", 2*time.Minute, func() bool {
		for _, in := range list() {
			if in.Usage.SampledAt.IsZero() {
				return false
			}
		}
		return true
	})

	before := counter.fromList.Load()
	infos := list()
	if got := counter.fromList.Load() - before; got != 0 {
		t.Errorf("List made %d stats calls, want 0 (it answers from the samples)", got)
	}
	if len(infos) != n {
		t.Fatalf("List returned %d sandboxes, want %d", len(infos), n)
	}
	for _, in := range infos {
		lim, ok := want[in.ID]
		if !ok {
			t.Errorf("List returned unknown sandbox %s", in.ID)
			continue
		}
		if in.State != "running" {
			t.Errorf("%s: state %q, want running", in.ID, in.State)
		}
		if in.Usage.MemoryBytes == 0 || in.Usage.Pids == 0 {
			t.Errorf("%s: usage %+v, want memory and pids above zero", in.ID, in.Usage)
		}
		if in.Limits != lim {
			t.Errorf("%s: limits %+v, want %+v", in.ID, in.Limits, lim)
		}
	}
	if counter.all.Load() == 0 {
		t.Error("no stats call at all: the usage did not come from Docker")
	}
}

// inspectCounter is the real backend counting inspect calls per container.
type inspectCounter struct {
	*docker.Backend
	mu    sync.Mutex
	calls map[string]int
}

func (c *inspectCounter) Inspect(ctx context.Context, containerID string) (backend.ContainerInfo, error) {
	c.mu.Lock()
	c.calls[containerID]++
	c.mu.Unlock()
	return c.Backend.Inspect(ctx, containerID)
}

// TestListerLimitsFromLabels: `mcp-sandbox ps` and the tray read a
// sandbox's limits from the labels it was created with, with no inspect,
// and the limits are the ones the engine applied.
func TestListerLimitsFromLabels(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{edit: func(c *config.Config) { c.Limits.MaxSandboxes = 100 }})
	sb := mustCreate(t, eng, sandbox.CreateRequest{Language: "python", MemoryMB: 300, CPUs: 0.5})
	counter := &inspectCounter{Backend: te.be, calls: map[string]int{}}
	infos, err := inventory.Lister{Backend: counter, State: te.st, Usage: true}.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got *inventory.Info
	for i := range infos {
		if infos[i].ID == sb.ID {
			got = &infos[i]
		}
	}
	if got == nil {
		t.Fatalf("sandbox %s not listed", sb.ID)
	}
	want := sb.Limits // the exec timeout included: it is labelled too
	if got.Limits != want {
		t.Errorf("limits %+v, want %+v", got.Limits, want)
	}
	if n := counter.calls[sb.ContainerID]; n != 0 {
		t.Errorf("%d inspect calls for a labelled sandbox, want 0", n)
	}
	if got.Usage.MemoryBytes == 0 || got.Usage.SampledAt.IsZero() {
		t.Errorf("usage %+v, want a live sample", got.Usage)
	}
	ci, err := te.be.Inspect(context.Background(), sb.ContainerID)
	if err != nil {
		t.Fatal(err)
	}
	wantPids := int64(got.Limits.Pids)
	if testenv.Runtime() == "runsc" {
		wantPids += docker.GVisorThreads // room for gVisor's own threads
	}
	if ci.MemoryBytes != int64(got.Limits.MemoryMB)<<20 || ci.NanoCPUs != int64(got.Limits.CPUs*1e9) || ci.Pids != wantPids {
		t.Errorf("container limits %d B, %d nano-CPUs, %d pids differ from the labelled %+v", ci.MemoryBytes, ci.NanoCPUs, ci.Pids, got.Limits)
	}
}
