package trayapp

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
)

// writeTrayFile writes tray.json when its content changed.
func (a *App) writeTrayFile() {
	a.mu.Lock()
	ti := traywin.TrayInfo{PID: os.Getpid(), HTTP: a.s.http}
	if a.offer != nil {
		ti.Offer = a.offer.Version
	}
	a.mu.Unlock()
	b, err := json.Marshal(ti)
	if err != nil {
		return
	}
	path := filepath.Join(a.st.Dir(), traywin.TrayFile)
	a.trayFileMu.Lock()
	defer a.trayFileMu.Unlock()
	if string(b) == a.trayFileLast {
		return
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		a.log.Warn("write tray.json", "err", err)
		return
	}
	if err := os.Rename(tmp, path); err != nil {
		a.log.Warn("write tray.json", "err", err)
		return
	}
	a.trayFileLast = string(b)
}

// watchStateDir follows the pause flag, which the window (and the tray's
// own menu) set, and applies it: pausing removes every sandbox and stops
// the HTTP server; starting starts it again. Each change is notified.
func (a *App) watchStateDir(ctx context.Context) {
	err := dirwatch.Watch(ctx, a.st.Dir(), 100*time.Millisecond, func() {
		a.applyPaused(ctx, a.st.Paused())
	}, "paused")
	if err != nil {
		a.log.Warn("watch the state directory", "err", err)
	}
}

// applyPaused makes the tray agree with the pause flag.
func (a *App) applyPaused(ctx context.Context, paused bool) {
	a.mu.Lock()
	was := a.s.paused
	a.s.paused = paused
	a.mu.Unlock()
	if was == paused {
		return
	}
	a.log.Info("service", "paused", paused)
	a.applyHTTP()
	a.redraw()
	httpOn := a.cfg.Current().Tray.HTTPPort > 0
	if !paused {
		a.notify("MCP Sandbox runs again: servers start sandboxes" + ifHTTP(httpOn, ", and the HTTP server is back") + ".")
		return
	}
	n, err := a.stopAll(ctx)
	msg := "MCP Sandbox is Paused: " + n.String() + " stopped" + ifHTTP(httpOn, ", the HTTP server stopped,") + " and servers refuse new sandboxes until you choose Start."
	if err != nil && ctx.Err() == nil {
		msg += " Some sandboxes could not be stopped: " + err.Error()
	}
	a.notify(msg)
}

// setPaused writes the pause flag; watchStateDir applies it (so a flag
// the window writes takes the same path).
func (a *App) setPaused(ctx context.Context, paused bool) {
	if err := a.st.SetPaused(paused); err != nil {
		a.log.Error("pause", "err", err)
		a.notify("Could not change the pause flag: " + err.Error())
		return
	}
	a.applyPaused(ctx, paused)
}

// ifHTTP is s when the tray's HTTP server is configured: messages name
// only what exists.
func ifHTTP(on bool, s string) string {
	if on {
		return s
	}
	return ""
}
