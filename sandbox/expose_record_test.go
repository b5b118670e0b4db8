package sandbox_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestExposeRecorded: opening and closing a preview updates the
// sandbox's state record, and the window's Lister (another process's
// view: labels and records) lists the previews with their URLs.
func TestExposeRecorded(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	a := mustExpose(t, eng, sb.ID, 8000)
	b := mustExpose(t, eng, sb.ID, 8001)
	listed := func() []preview.Exposure {
		list, err := inventory.Lister{Backend: docker.New(te.cli, testenv.Logger(t)), State: te.st}.List(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range list {
			if in.ID == sb.ID {
				return in.Previews()
			}
		}
		return nil
	}
	waitFor(t, "both previews in the record", 10*time.Second, func() bool {
		return slices.Equal(listed(), []preview.Exposure{a, b})
	})
	if res, err := eng.Unexpose(context.Background(), sb.ID, preview.ExposeRequest{Port: 8000}); !res.Closed || err != nil {
		t.Fatalf("close: %v %v", res.Closed, err)
	}
	waitFor(t, "only 8001 in the record", 10*time.Second, func() bool {
		return slices.Equal(listed(), []preview.Exposure{b})
	})
}
