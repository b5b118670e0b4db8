//go:build cgo

package windowapp

import (
	"context"
	"fmt"
	"time"

	"github.com/docker/docker/client"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
)

// checkHealth runs doctor's engine checks (app/internal/health: images
// present or pullable, interpreters present, limits within the engine's)
// on the engine found, and shows what they found on the Status tab. On
// the engine loop's goroutine, after each look that found one; a look
// that found none clears it.
func (a *App) checkHealth(ctx context.Context, conn *engineconn.Conn) {
	gen := a.healthGen.Add(1)
	if conn == nil || conn.Client == nil { // none, or a cluster: the checks are Docker's
		a.update(func(s *uiState) { s.health = nil })
		return
	}
	cfg := a.cfg.Current()
	a.mu.Lock()
	podman := a.ui.docker != nil && a.ui.docker.Chosen != nil && a.ui.docker.Chosen.Engine == "Podman"
	a.mu.Unlock()
	key := healthKey(ctx, conn.Client, cfg)
	h := a.cachedHealth(key)
	if h == nil {
		h = health.Check(ctx, conn.Client, cfg, podman)
		if ctx.Err() != nil {
			return
		}
		// Problems found while the engine stopped answering say nothing
		// about the images: shown, never kept, or the look that finds the
		// engine back would show them again from the cache (seen: "cannot
		// run python3 … docker unreachable" for a minute after Docker came
		// back, and then for good, nothing checking again).
		if len(h.Problems) == 0 || answers(ctx, conn.Client) {
			a.keepHealth(key, h)
		}
	}
	if a.healthGen.Load() != gen {
		return // a newer check (another look, a config change) publishes
	}
	for _, p := range h.Problems {
		a.log.Info("health", "problem", p.Text, "blocking", p.Blocking)
	}
	a.update(func(s *uiState) { s.health = h })
}

// pullImage is the Status tab's Pull button: the image through the
// backend's EnsureImage, as the first call would pull it, with progress;
// then the checks run again.
func (a *App) pullImage(ctx context.Context, image string, progress ui.PullProgress) error {
	conn, err := a.backend()
	if err != nil {
		return err
	}
	_, err = conn.Backend.EnsureImage(ctx, image, "missing", func(p backend.PullProgress) {
		line := p.Status
		if p.Total > 0 {
			line = fmt.Sprintf("%s: %s of %s", p.Status, sandboxwatch.Bytes(uint64(p.Current)), sandboxwatch.Bytes(uint64(p.Total)))
		}
		progress(line)
	})
	if err != nil {
		return fmt.Errorf("pull %s: %w", image, err)
	}
	a.log.Info("pulled from the window", "image", image)
	a.goBG(func(ctx context.Context) { a.checkHealth(ctx, a.engine.Conn()) })
	return nil
}

// answers reports whether the engine answers a ping within a few seconds.
func answers(ctx context.Context, cli *client.Client) bool {
	pctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err := cli.Ping(pctx)
	return err == nil
}
