package trayapp

import (
	"context"
	"reflect"

	"fyne.io/fyne/v2/driver/desktop"

	"github.com/mcp-sandbox/mcp-sandbox/app/icons"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/ui"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// uiState is what the background work last learned; the tray menu and the
// Status tab are drawn from it. Guarded by App.mu.
type uiState struct {
	detecting bool
	docker    *dockerhost.Result
	dockerOK  bool
	cfgHost   string // the config's docker.host at the last look for Docker
	runtime   string
	version   string
	snap      sandboxwatch.Snapshot
	paused    bool
	clients   []ui.ClientRow
	http      ui.HTTPInfo

	// Drawn last, so the menu is rebuilt only when it changes.
	menu traymenu.State
	icon icons.State
}

// setUpTray installs the tray icon and menu when a session bus exists,
// and reports what it found.
func (a *App) setUpTray() trayHost {
	host := probeTrayHost()
	a.log.Info("tray host", "bus", host.Bus, "watcher", host.Watcher, "why", host.Why)
	desk, ok := a.fyne.(desktop.App)
	if !ok || !host.Bus {
		// Without a bus, enabling the tray would make Quit panic.
		return host
	}
	a.desk = desk
	a.mu.Lock()
	a.ui.detecting = true
	a.mu.Unlock()
	a.drawTray(true)
	return host
}

// update changes the shared state and redraws the tray and the Status tab
// on the UI goroutine.
func (a *App) update(f func(s *uiState)) {
	a.mu.Lock()
	f(&a.ui)
	a.mu.Unlock()
	a.do(func() {
		a.drawTray(false)
		a.pushStatus()
	})
}

func (a *App) menuState() traymenu.State {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := traymenu.State{
		DockerOK:  a.ui.dockerOK,
		Detecting: a.ui.detecting && a.ui.docker == nil,
		Sandboxes: len(a.ui.snap.Rows),
		Paused:    a.ui.paused,
	}
	if a.ui.docker != nil && a.ui.docker.Chosen != nil {
		s.Engine = a.ui.docker.Chosen.Engine
	} else if a.ui.dockerOK {
		s.Engine = "Docker"
	}
	for _, c := range a.ui.clients {
		s.Clients = append(s.Clients, traymenu.Client{Name: c.Name, Display: c.Display, Installed: c.Installed, Configured: c.Configured})
	}
	return s
}

// drawTray rebuilds the tray menu and icon when they changed (or always,
// when force is set). UI goroutine only.
func (a *App) drawTray(force bool) {
	if a.desk == nil {
		return
	}
	s := a.menuState()
	icon := traymenu.Icon(s)
	a.mu.Lock()
	same := reflect.DeepEqual(s, a.ui.menu)
	sameIcon := icon == a.ui.icon
	a.ui.menu, a.ui.icon = s, icon
	a.mu.Unlock()
	if !same || force {
		a.desk.SetSystemTrayMenu(traymenu.Build(s, traymenu.Actions{
			Start:     func() { a.goBG(func(ctx context.Context) { a.setPaused(ctx, false) }) },
			Stop:      func() { a.goBG(func(ctx context.Context) { a.setPaused(ctx, true) }) },
			Open:      a.showWindow,
			StopAll:   func() { a.goBG(func(ctx context.Context) { a.stopAll(ctx) }) },
			Quit:      a.quit,
			Configure: func(name string) { a.goBG(func(ctx context.Context) { a.configureFromTray(ctx, name) }) },
		}))
	}
	if !sameIcon || force {
		a.desk.SetSystemTrayIcon(icons.Tray(icon))
	}
}

// pushStatus shows the shared state on the Status tab. UI goroutine only.
func (a *App) pushStatus() {
	a.mu.Lock()
	info := ui.StatusInfo{
		Detecting: a.ui.detecting, Docker: a.ui.docker,
		Runtime: a.ui.runtime, Server: a.server, ServerVersion: a.ui.version,
		HTTP: a.ui.http, Paused: a.ui.paused, Sandboxes: len(a.ui.snap.Rows),
	}
	a.mu.Unlock()
	if a.serverErr != nil {
		info.ServerErr = a.serverErr.Error()
	}
	a.win.Status.Set(info)
}
