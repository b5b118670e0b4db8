package sandbox_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
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

func (s *statsCounter) Usage(ctx context.Context, containerID string) (sandbox.Usage, error) {
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
		wrap: func(b *docker.Backend) sandbox.Backend {
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
	want := map[string]sandbox.Limits{}
	for i := 0; i < n; i++ {
		sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "python"})
		if err != nil {
			t.Fatal(err)
		}
		want[sb.ID] = sb.Limits
	}
	listCtx := context.WithValue(ctx, listCall{}, true)
	list := func() []sandbox.Info {
		t.Helper()
		infos, err := eng.List(listCtx)
		if err != nil {
			t.Fatal(err)
		}
		return infos
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
