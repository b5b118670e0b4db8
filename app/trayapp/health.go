package trayapp

import (
	"context"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/engineconn"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
)

// checkHealth runs the window's check (app/internal/health: the same as
// `doctor`'s) on the engine a look found, on a goroutine of its own, and
// keeps what keeps code from running for the menu's attention line, the
// title and the badge. It runs on each look (start, Docker found again,
// every config change), never on a timer: the tray stays idle. A newer
// look's check wins over an older one's.
func (a *App) checkHealth(ctx context.Context, l engineconn.Look) {
	gen := a.healthGen.Add(1)
	if l.Err != nil || l.Conn == nil || l.Conn.Client == nil { // none, or a cluster
		a.update(func(s *trayState) { s.attention = "" })
		return
	}
	podman := l.Result.Chosen != nil && l.Result.Chosen.Engine == "Podman"
	cli, cfg := l.Conn.Client, a.cfg.Current()
	go func() {
		h := health.Check(ctx, cli, cfg, podman)
		if ctx.Err() != nil || a.healthGen.Load() != gen {
			return
		}
		if att := h.Attention(); att != "" {
			a.log.Info("health: needs attention", "what", att)
		} else {
			a.log.Info("health: nothing keeps code from running", "problems", len(h.Problems))
		}
		a.update(func(s *trayState) { s.attention = h.Attention() })
	}()
}

// attention is the menu's attention line: the config file that does not
// load first (the servers refuse every call then), else the health check's.
func (a *App) attention(s trayState) string {
	if a.cfg.Err() != nil {
		return "the config file does not load"
	}
	return s.attention
}
