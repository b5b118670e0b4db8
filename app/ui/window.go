package ui

import (
	"context"
	"net/url"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
)

// Title is the main window's title, a contract: outside tests find the
// window by it.
const Title = "MCP Sandbox"

// Tab names, as the tabs show them.
const (
	TabStatus    = "Status"
	TabSandboxes = "Sandboxes"
	TabClients   = "Clients"
	TabSettings  = "Settings"
	TabActivity  = "Activity"
)

// Actions are what the window asks the rest of the tray to do. Each runs on
// a goroutine of its own and may block.
type Actions struct {
	Status    StatusActions
	Sandboxes SandboxActions
	Clients   ClientActions
	Settings  SettingsActions
	Activity  ActivityActions
	Changes   ChangesActions
}

// Options configures the window.
type Options struct {
	Actions Actions
	// Now is the clock ages and expiries are shown against; nil means
	// time.Now. Tests fix it.
	Now func() time.Time
	// Go runs an action; nil means a new goroutine. Tests run actions
	// inline, so results are in place when the call returns.
	Go func(func())
	// Do hands f to the UI goroutine from an action's goroutine; nil means
	// fyne.Do. The app's stops handing off once Fyne is stopping.
	Do func(f func())
	// OnViewChange is told which tab is in view, and whether the window is
	// visible, whenever either changes, so the caller samples only what is
	// seen.
	OnViewChange func(tab string, visible bool)
	// OnUsageSeen is told whether live usage is on screen (the Sandboxes
	// tab of the shown window, or any details view), whenever that
	// changes, so usage is sampled only then, and always then.
	OnUsageSeen func(seen bool)
	// OnClose is called when the user closes the window; nil hides it.
	OnClose func()
	// OpenURL opens a preview in the browser; nil means the app's
	// OpenURL. Tests record it.
	OpenURL func(*url.URL) error
}

// Window is the main window.
type Window struct {
	win     fyne.Window
	tabs    *container.AppTabs
	o       Options
	ctx     context.Context
	cancel  context.CancelFunc
	visible bool
	usage   bool // what OnUsageSeen was last told

	Status    *StatusTab
	Sandboxes *SandboxesTab
	Clients   *ClientsTab
	Settings  *SettingsTab
	Activity  *ActivityTab
	Changes   *ChangesTab
}

// New builds the window (hidden) in app a.
func New(a fyne.App, o Options) *Window {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Go == nil {
		o.Go = func(f func()) { go f() }
	}
	if o.Do == nil {
		o.Do = fyne.Do
	}
	w := &Window{win: a.NewWindow(Title), o: o}
	w.ctx, w.cancel = context.WithCancel(context.Background())
	w.Status = newStatusTab(w, o.Actions.Status)
	w.Sandboxes = newSandboxesTab(w, o.Actions.Sandboxes)
	w.Clients = newClientsTab(w, o.Actions.Clients)
	w.Settings = newSettingsTab(w, o.Actions.Settings)
	w.Activity = newActivityTab(w, o.Actions.Activity)
	w.Changes = newChangesTab(w, o.Actions.Changes)
	w.tabs = container.NewAppTabs(
		container.NewTabItemWithIcon(TabStatus, theme.InfoIcon(), w.Status.content),
		container.NewTabItemWithIcon(TabSandboxes, theme.StorageIcon(), w.Sandboxes.content),
		container.NewTabItemWithIcon(TabClients, theme.ComputerIcon(), w.Clients.content),
		container.NewTabItemWithIcon(TabSettings, theme.SettingsIcon(), w.Settings.content),
		container.NewTabItemWithIcon(TabActivity, theme.HistoryIcon(), w.Activity.content),
		container.NewTabItemWithIcon(TabChanges, theme.DocumentIcon(), w.Changes.content),
	)
	w.tabs.OnSelected = func(*container.TabItem) { w.viewChanged() }
	w.win.SetContent(w.tabs)
	w.win.Resize(fyne.NewSize(1120, 700))
	w.win.SetCloseIntercept(func() {
		if o.OnClose != nil {
			o.OnClose()
			return
		}
		w.Hide()
	})
	return w
}

// Window returns the Fyne window.
func (w *Window) Window() fyne.Window { return w.win }

// Show shows the window and brings it forward.
func (w *Window) Show() {
	w.win.Show()
	w.win.RequestFocus()
	if !w.visible {
		w.visible = true
		w.viewChanged()
	}
}

// Hide hides the window; the tray keeps running.
func (w *Window) Hide() {
	w.win.Hide()
	if w.visible {
		w.visible = false
		w.viewChanged()
	}
}

// Visible reports whether the window is shown.
func (w *Window) Visible() bool { return w.visible }

// SelectTab brings the named tab into view.
func (w *Window) SelectTab(name string) {
	for _, it := range w.tabs.Items {
		if it.Text == name {
			w.tabs.Select(it)
		}
	}
}

// CurrentTab names the tab in view.
func (w *Window) CurrentTab() string { return w.tabs.Selected().Text }

// Close ends the window's pending actions and closes it.
func (w *Window) Close() {
	w.cancel()
	w.win.Close()
}

func (w *Window) viewChanged() {
	tab := w.CurrentTab()
	if tab == TabActivity && w.visible {
		w.Activity.Reload()
	}
	if tab == TabChanges && w.visible {
		w.Changes.Reload()
	}
	if tab == TabClients && w.visible {
		w.Clients.Reload()
	}
	if w.o.OnViewChange != nil {
		w.o.OnViewChange(tab, w.visible)
	}
	w.usageChanged()
}

// usageChanged tells OnUsageSeen when usage came on screen or left it.
func (w *Window) usageChanged() {
	seen := (w.visible && w.CurrentTab() == TabSandboxes) || len(w.Sandboxes.open) > 0
	if seen != w.usage {
		w.usage = seen
		if w.o.OnUsageSeen != nil {
			w.o.OnUsageSeen(seen)
		}
	}
}

// async runs f with the window's context on a goroutine (Options.Go) and
// then done with its error on the UI goroutine.
func (w *Window) async(f func(ctx context.Context) error, done func(error)) {
	w.o.Go(func() {
		err := f(w.ctx)
		w.o.Do(func() { done(err) })
	})
}
