package trayapp

import (
	"context"
	"fmt"
	"reflect"
	"sync"

	"fyne.io/systray"

	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
)

// menuView keeps the systray items of traymenu.Build's menu and updates
// them in place: the menu's structure never changes, only labels, checks,
// enabled and shown flags (and the Clients submenu grows once the clients
// are known).
type menuView struct {
	a     *App
	mu    sync.Mutex
	items []*systray.MenuItem   // by position; nil for separators
	subs  [][]*systray.MenuItem // Clients and any other submenu, by position
	acts  [][]func()            // current actions, [item][0] or [item][1+child]
	icon  string
	title string
	last  *traymenu.State // drawn last; nothing is sent while it holds
	shown map[*systray.MenuItem]traymenu.Item
}

// runMenu shows the tray icon and menu and blocks until the tray quits.
func runMenu(a *App) {
	go func() {
		<-a.ctx.Done()
		systray.Quit()
	}()
	systray.Run(func() {
		m := &menuView{a: a}
		items := traymenu.Build(a.menuState(), a.menuActions())
		m.acts = make([][]func(), len(items))
		m.subs = make([][]*systray.MenuItem, len(items))
		for i, it := range items {
			if it.Separator {
				systray.AddSeparator()
				m.items = append(m.items, nil)
				continue
			}
			mi := systray.AddMenuItem(it.Label, "")
			m.items = append(m.items, mi)
			m.acts[i] = []func(){it.Action}
			m.listen(mi, i, 0)
		}
		a.mu.Lock()
		a.menu = m
		a.mu.Unlock()
		m.draw(a.menuState())
		a.log.Info("tray icon and menu shown")
	}, func() {})
}

// listen calls the item's current action for each click.
func (m *menuView) listen(mi *systray.MenuItem, i, j int) {
	go func() {
		for {
			select {
			case <-mi.ClickedCh:
				m.mu.Lock()
				var f func()
				if i < len(m.acts) && j < len(m.acts[i]) {
					f = m.acts[i][j]
				}
				m.mu.Unlock()
				if f != nil {
					f()
				}
			case <-m.a.ctx.Done():
				return
			}
		}
	}()
}

// draw brings the items, the icon and the title in line with s and
// reports whether it changed anything. When s is what was drawn last it
// sends nothing: each item update is a D-Bus signal the tray host wakes
// up for.
func (m *menuView) draw(s traymenu.State) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.last != nil && reflect.DeepEqual(*m.last, s) {
		return false
	}
	m.last = &s
	items := traymenu.Build(s, m.a.menuActions())
	for i, it := range items {
		mi := m.items[i]
		if mi == nil {
			continue
		}
		m.acts[i] = m.acts[i][:1]
		m.acts[i][0] = it.Action
		m.apply(mi, it)
		for j, c := range it.Children {
			if j >= len(m.subs[i]) {
				sub := mi.AddSubMenuItemCheckbox(c.Label, "", c.Checked)
				m.subs[i] = append(m.subs[i], sub)
				m.listen(sub, i, j+1)
			}
			m.apply(m.subs[i][j], c)
			m.acts[i] = append(m.acts[i], c.Action)
		}
		for j := len(it.Children); j < len(m.subs[i]); j++ {
			m.subs[i][j].Hide()
		}
	}
	icon, alert := traymenu.Icon(s), traymenu.Alert(s)
	if key := fmt.Sprint(icon, alert); key != m.icon {
		m.icon = key
		setTrayIcon(icon, alert)
	}
	if title := traymenu.Title(s); title != m.title {
		m.title = title
		setTrayTitle(title)
	}
	return true
}

// apply sets an item's label and flags, when they changed since it was
// last shown.
func (m *menuView) apply(mi *systray.MenuItem, it traymenu.Item) {
	if m.shown == nil {
		m.shown = map[*systray.MenuItem]traymenu.Item{}
	}
	if was, ok := m.shown[mi]; ok && was.Label == it.Label && was.Disabled == it.Disabled && was.Checked == it.Checked && was.Hidden == it.Hidden {
		return
	}
	m.shown[mi] = it
	mi.SetTitle(it.Label)
	if it.Disabled {
		mi.Disable()
	} else {
		mi.Enable()
	}
	if it.Checked {
		mi.Check()
	} else if mi.Checked() {
		mi.Uncheck()
	}
	if it.Hidden {
		mi.Hide()
	} else {
		mi.Show()
	}
}

// menuActions binds the menu's items; each runs off the menu's goroutine.
func (a *App) menuActions() traymenu.Actions {
	return traymenu.Actions{
		Start: func() { a.goBG(func(ctx context.Context) { a.setPaused(ctx, false) }) },
		Pause: func() { a.goBG(a.pauseFromMenu) },
		Open:  func() { a.openWindow() },
		StopAll: func() {
			a.goBG(func(ctx context.Context) {
				n, err := a.stopAll(ctx)
				msg := "Stopped " + n.String() + "."
				if err != nil {
					msg = "Stop all sandboxes: " + err.Error()
				}
				a.notify(msg)
			})
		},
		Quit:         a.quit,
		CheckUpdates: func() { a.goBG(func(ctx context.Context) { a.checkUpdates(ctx, true) }) },
		Install:      func() { a.goBG(a.installOffer) },
		Move:         func() { a.goBG(a.moveToApplications) },
		Configure:    func(name string) { a.goBG(func(ctx context.Context) { a.configureFromTray(ctx, name) }) },
		Answer:       func(id, choice string) { go a.answer(id, choice) },
		Review:       func() { a.openWindow("--tab", "Changes") },
	}
}

// pauseFromMenu pauses: the menu's Pause submenu asked already (its one
// action names what it stops), so no window opens for it. The
// notification says what was stopped (applyPaused).
func (a *App) pauseFromMenu(ctx context.Context) { a.setPaused(ctx, true) }
