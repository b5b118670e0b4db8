package sandbox_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/image"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// registryImage is pushed to Debian's docker-registry on 127.0.0.1:5000 by
// .ci/setup-host.
const registryImage = "127.0.0.1:5000/mcp-sandbox-test/busybox:1"

func needRegistry(t *testing.T) {
	t.Helper()
	resp, err := http.Get("http://127.0.0.1:5000/v2/mcp-sandbox-test/busybox/tags/list")
	if err != nil || resp.StatusCode != 200 {
		testenv.Missing(t, "the local registry on 127.0.0.1:5000 with "+registryImage)
	}
	resp.Body.Close()
}

// TestPullFromRegistry exercises the real pull path: missing, always,
// never, an unknown image, an unreachable registry.
func TestPullFromRegistry(t *testing.T) {
	needRegistry(t)
	eng, cli := newEngine(t, func(c *config.Config) {
		c.Images.Allowed = []string{"127.0.0.1:5000/*", "127.0.0.1:5999/*"}
		c.Images.Pull = "missing"
	})
	ctx := context.Background()
	cli.ImageRemove(ctx, registryImage, image.RemoveOptions{Force: true})
	t.Cleanup(func() { cli.ImageRemove(context.Background(), registryImage, image.RemoveOptions{Force: true}) })

	var mu sync.Mutex
	var steps []backend.PullProgress
	progress := func(p backend.PullProgress) { mu.Lock(); steps = append(steps, p); mu.Unlock() }
	sb, err := eng.Create(ctx, sandbox.CreateRequest{Language: "bash", Image: registryImage, Progress: progress})
	if err != nil {
		t.Fatalf("create with a pull: %v", err)
	}
	mu.Lock()
	if len(steps) == 0 {
		t.Error("no pull progress was reported")
	}
	mu.Unlock()
	if r := mustExec(t, eng, sb.ID, "echo pulled; id -u"); r.Stdout != "pulled\n1000\n" {
		t.Errorf("sandbox from the pulled image: %+v", r)
	}

	for _, tc := range []struct {
		name, image, pull string
		want              error
		msg               string
	}{
		{"unknown image", "127.0.0.1:5000/mcp-sandbox-test/nope:1", "missing", backend.ErrImageNotFound, "does not know"},
		{"unreachable registry", "127.0.0.1:5999/x/y:1", "missing", backend.ErrPull, "reachable"},
		{"never and absent", "127.0.0.1:5000/mcp-sandbox-test/nope:2", "never", backend.ErrImageNotFound, `images.pull = "missing"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, _ := newEngine(t, func(c *config.Config) {
				c.Images.Allowed = []string{"127.0.0.1:5000/*", "127.0.0.1:5999/*"}
				c.Images.Pull = tc.pull
			})
			_, err := e.Create(ctx, sandbox.CreateRequest{Language: "bash", Image: tc.image})
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("got %v, want %v mentioning %q", err, tc.want, tc.msg)
			}
		})
	}

	// The configured image cannot be had: the error says where it is
	// chosen, so a person can point it at an image the engine has.
	t.Run("configured image unreachable", func(t *testing.T) {
		e, _ := newEngine(t, func(c *config.Config) {
			c.Images.Bash = "127.0.0.1:5999/x/y:1"
			c.Images.Pull = "missing"
		})
		_, err := e.Create(ctx, sandbox.CreateRequest{Language: "bash"})
		if !errors.Is(err, backend.ErrPull) || !strings.Contains(err.Error(), `set bash = "IMAGE" under [images]`) {
			t.Errorf("got %v, want ErrPull naming [images] bash", err)
		}
	})

	// always: pulls again although the image is present.
	steps = nil
	always, _ := newEngine(t, func(c *config.Config) {
		c.Images.Allowed = []string{"127.0.0.1:5000/*"}
		c.Images.Pull = "always"
	})
	if _, err := always.Create(ctx, sandbox.CreateRequest{Language: "bash", Image: registryImage, Progress: progress}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(steps) == 0 {
		t.Error("pull = always did not pull")
	}
}
