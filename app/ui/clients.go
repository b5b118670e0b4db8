package ui

import (
	"context"
	"path/filepath"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// ClientRow is one AI client as the Clients tab shows it.
type ClientRow struct {
	// Name is the client's command-line name ("claude"); Display is for
	// people ("Claude Desktop").
	Name, Display string
	Installed     bool
	Configured    bool
	// Matches is set when the entry is exactly what Configure writes;
	// a configured entry that does not match needs repair.
	Matches bool
	// Path is the client's config file; LastBackup the newest backup we
	// made of it.
	Path, LastBackup string
	// Problem says why the config could not be read, if it could not.
	Problem string
}

// ClientActions are the Clients tab's buttons. The string results are
// messages for the person ("Configured …; restart Cursor to load it").
type ClientActions struct {
	List      func(ctx context.Context) []ClientRow
	Configure func(ctx context.Context, name string) (string, error)
	Remove    func(ctx context.Context, name string) (string, error)
	Verify    func(ctx context.Context, name string) (string, error)
}

// ClientsTab lists every supported client.
type ClientsTab struct {
	w       *Window
	act     ClientActions
	content fyne.CanvasObject

	rows    []ClientRow
	busy    map[string]bool
	grid    *grid
	message *widget.Label

	servers      []ServerRow
	serversLabel *widget.Label // the servers running now (servers.go)
}

// The columns fit a window 800 px wide: the client with its state, one
// fact a line; the buttons; the config file and its last backup (a long
// path wraps, and the row grows).
var clientColumns = []string{"Client", "", "Config file"}

func newClientsTab(w *Window, act ClientActions) *ClientsTab {
	t := &ClientsTab{w: w, act: act, busy: map[string]bool{}}
	widths := []float32{160, 210, 390}
	cols := make([]column, len(clientColumns))
	for i, title := range clientColumns {
		cols[i] = column{title: title, width: widths[i]}
	}
	idle := func(name string) bool { return t.busy[name] }
	cols[1].buttons = []columnButton{
		{label: func(name string) string {
			r, ok := t.row(name)
			switch {
			case !ok:
				return ""
			case r.Configured && r.Matches:
				return ""
			case r.Configured:
				return "Repair"
			}
			return "Configure"
		}, tap: func(name string) { t.runNamed(name, "configure", t.act.Configure) }, disabled: idle},
		{label: func(name string) string { r, _ := t.row(name); return ifs(r.Configured, "Remove") },
			tap: func(name string) { t.runNamed(name, "remove", t.act.Remove) }, disabled: idle},
		{label: func(name string) string { r, _ := t.row(name); return ifs(r.Configured, "Verify") },
			tap: func(name string) { t.runNamed(name, "verify", t.act.Verify) }, disabled: idle},
	}
	t.grid = newGrid(cols, func() int { return len(t.rows) }, func(row int) string { return t.rows[row].Name }, t.cell)
	t.grid.grow = "Config file"
	t.grid.lines = 3
	t.message = wrapped("Configure writes an mcp-sandbox entry that runs the bundled server; the file is backed up first and everything else in it is kept.")
	reload := widget.NewButtonWithIcon("Reload", theme.ViewRefreshIcon(), t.Reload)
	t.serversLabel = wrapped("")
	running := container.NewVBox(heading("Servers running now"), t.serversLabel, heading("Clients"))
	t.content = container.NewBorder(running, container.NewBorder(nil, nil, nil, reload, t.message), nil, nil, t.grid.content)
	t.serversLabel.SetText(t.serversText())
	return t
}

func ifs(cond bool, s string) string {
	if cond {
		return s
	}
	return ""
}

func yesNo(b bool) string { return ifs(b, "yes") + ifs(!b, "no") }

func (t *ClientsTab) cell(row, col int) string {
	r := t.rows[row]
	switch clientColumns[col] {
	case "Client":
		return r.Display + "\n" + ifs(!r.Installed, "not ") + "installed\n" + configured(r)
	case "Config file":
		backup := "no backup made yet"
		if r.LastBackup != "" {
			backup = "last backup: " + filepath.Base(r.LastBackup)
		}
		if r.Problem != "" {
			backup = "unreadable: " + r.Problem
		}
		return r.Path + "\n" + backup
	}
	return ""
}

// configured is the state of a client's entry, in words.
func configured(r ClientRow) string {
	switch {
	case r.Problem != "":
		return "config unreadable"
	case r.Configured && !r.Matches:
		return "needs repair"
	case r.Configured:
		return "configured"
	}
	return "not configured"
}

// Set shows rows.
func (t *ClientsTab) Set(rows []ClientRow) {
	t.rows = rows
	t.grid.Refresh()
	t.w.Status.rebuild() // its checklist names the clients
}

// Rows returns what the tab shows.
func (t *ClientsTab) Rows() []ClientRow { return t.rows }

// Message returns the last message shown under the table.
func (t *ClientsTab) Message() string { return t.message.Text }

// Reload reads every client's state again.
func (t *ClientsTab) Reload() {
	if t.act.List == nil {
		return
	}
	var rows []ClientRow
	t.w.async(func(ctx context.Context) error { rows = t.act.List(ctx); return nil }, func(error) { t.Set(rows) })
}

// Tap runs a row's action ("configure", "remove" or "verify") as its
// button does.
func (t *ClientsTab) Tap(name, action string) {
	for _, r := range t.rows {
		if r.Name == name {
			f := map[string]func(context.Context, string) (string, error){
				"configure": t.act.Configure, "remove": t.act.Remove, "verify": t.act.Verify,
			}[action]
			t.run(r, action, f)
		}
	}
}

// row is the client named name, as the tab knows it now.
func (t *ClientsTab) row(name string) (ClientRow, bool) {
	for _, r := range t.rows {
		if r.Name == name {
			return r, true
		}
	}
	return ClientRow{}, false
}

// runNamed runs a row's action on the client named name, if it is still
// listed.
func (t *ClientsTab) runNamed(name, verb string, f func(context.Context, string) (string, error)) {
	if r, ok := t.row(name); ok {
		t.run(r, verb, f)
	}
}

func (t *ClientsTab) run(r ClientRow, verb string, f func(context.Context, string) (string, error)) {
	if f == nil || t.busy[r.Name] {
		return
	}
	t.busy[r.Name] = true
	t.grid.Refresh()
	t.message.SetText(r.Display + ": " + verb + "…")
	var msg string
	t.w.async(func(ctx context.Context) error {
		var err error
		msg, err = f(ctx, r.Name)
		return err
	}, func(err error) {
		delete(t.busy, r.Name)
		if err != nil {
			t.message.SetText(r.Display + ": " + err.Error())
		} else {
			t.message.SetText(msg)
		}
		t.Reload()
	})
}
