//go:build cgo

package windowapp

import (
	"context"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// readTray takes what only the tray knows (its HTTP server, an offered
// update) from tray.json, and the pause flag from the state directory.
func (a *App) readTray() {
	ti, err := traywin.ReadTrayFile(a.st.Dir())
	paused := a.st.Paused()
	a.update(func(s *uiState) {
		s.paused = paused
		if err != nil {
			s.http = ui.HTTPInfo{State: "unknown: the tray is not running (" + err.Error() + ")"}
			s.offer = ""
			return
		}
		s.http = ui.HTTPInfo{Enabled: ti.HTTP.Enabled, URL: ti.HTTP.URL, Token: ti.HTTP.Token, State: ti.HTTP.State}
		s.offer = ti.Offer
	})
}

// watchStateDir follows tray.json and the pause flag.
func (a *App) watchStateDir(ctx context.Context) {
	a.readTray()
	err := dirwatch.Watch(ctx, a.st.Dir(), 100*time.Millisecond, a.readTray, "paused", traywin.TrayFile)
	if err != nil {
		a.log.Warn("watch the state directory", "err", err)
	}
}
