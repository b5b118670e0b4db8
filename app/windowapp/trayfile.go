package windowapp

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/mcp-sandbox/mcp-sandbox/app/trayapp"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// readTray takes what only the tray knows (its HTTP server, an offered
// update) from tray.json, and the pause flag from the state directory.
func (a *App) readTray() {
	ti, err := trayapp.ReadTrayFile(a.st.Dir())
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

// watchStateDir follows tray.json and the pause flag with fsnotify.
func (a *App) watchStateDir(ctx context.Context) {
	a.readTray()
	w, err := fsnotify.NewWatcher()
	if err != nil {
		a.log.Warn("watch the state directory", "err", err)
		return
	}
	defer w.Close()
	if err := w.Add(a.st.Dir()); err != nil {
		a.log.Warn("watch the state directory", "err", err)
		return
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-w.Events:
			if !ok {
				return
			}
			if n := filepath.Base(ev.Name); (n == "paused" || n == trayapp.TrayFile) && debounce == nil {
				debounce = time.After(100 * time.Millisecond)
			}
		case <-w.Errors:
		case <-debounce:
			debounce = nil
			a.readTray()
		}
	}
}
