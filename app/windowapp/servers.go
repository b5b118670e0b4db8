//go:build cgo

package windowapp

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
)

// watchServers lists the servers running now whenever a server's files in
// <state>/servers change (one starts, stops, or its watchdog removes what
// a killed one left), until ctx is done. Snapshots of the sandboxes list
// them again too (onSnapshot): a killed server's lock frees with no file
// event, and the sandboxes it owned go soon after.
func (a *App) watchServers(ctx context.Context) {
	dir := filepath.Join(a.st.Dir(), "servers")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		a.log.Warn("servers directory", "err", err)
		return
	}
	a.refreshServers()
	if err := dirwatch.Watch(ctx, dir, 100*time.Millisecond, a.refreshServers); err != nil {
		a.log.Warn("watch the servers directory", "err", err)
	}
}

// refreshServers reads the servers running now (state.RunningServers: only
// those whose lock is held) and shows them with the sandboxes each owns.
func (a *App) refreshServers() {
	infos, err := a.st.RunningServers()
	if err != nil {
		a.log.Warn("list the servers running now", "err", err)
	}
	a.mu.Lock()
	owned := map[string]int{}
	for _, r := range a.ui.snap.Rows {
		if !r.Pool {
			owned[r.Owner]++
		}
	}
	rows := make([]ui.ServerRow, 0, len(infos))
	for _, in := range infos {
		names := make([]string, len(in.Clients))
		for i, c := range in.Clients {
			names[i] = clientconfig.DisplayForMCPName(c)
		}
		rows = append(rows, ui.ServerRow{Clients: names, PID: in.PID, Since: in.StartedAt, Transport: in.Transport, Sandboxes: owned[in.Owner]})
	}
	same := a.serversShown != nil && slices.EqualFunc(rows, a.serversShown, func(x, y ui.ServerRow) bool {
		return slices.Equal(x.Clients, y.Clients) && x.PID == y.PID && x.Since.Equal(y.Since) && x.Transport == y.Transport && x.Sandboxes == y.Sandboxes
	})
	a.serversShown = rows
	a.mu.Unlock()
	if !same {
		total := 0
		for _, r := range rows {
			total += r.Sandboxes
		}
		a.log.Info("servers running now", "count", len(rows), "sandboxes", total)
		a.do(func() { a.win.Clients.SetServers(rows) })
	}
}
