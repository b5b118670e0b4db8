package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
)

// SandboxActions are the Sandboxes tab's buttons.
type SandboxActions struct {
	// Stop removes one sandbox, whichever server made it.
	Stop func(ctx context.Context, id string) error
	// StopAll removes every managed sandbox.
	StopAll func(ctx context.Context) error
	// Details feed a sandbox's details view (details.go).
	Details DetailsActions
}

// SandboxesTab is the live table of every managed sandbox.
type SandboxesTab struct {
	w       *Window
	act     SandboxActions
	content fyne.CanvasObject

	snap     sandboxwatch.Snapshot // its Rows without the warm pool
	count    sandboxwatch.Count    // the snapshot's count, warm ones too
	shown    []sandboxwatch.Row    // snap's rows of the client chosen, in the order chosen
	sortCol  int                   // the column sorted by; -1: the engine's order (oldest first)
	sortDesc bool
	client   string // the client shown (its display name); "": all
	place    string // where the sandboxes run, on a cluster; "" on Docker
	clients  *widget.Select
	stopping map[string]bool
	grid     *grid
	summary  *widget.Label
	errLabel *widget.Label
	empty    *widget.Label
	stopAll  *widget.Button
	stopAllQ *question // the Stop all question, while it shows
	details  *widget.Label
	top      *fyne.Container // the summary and the error above the table
	selected string
	open     map[string]*Details // the details views open, by sandbox id
	openBtn  *widget.Button      // opens the selected sandbox's details
	stopSel  *widget.Button      // stops the selected sandbox
	// lastClick, lastRow and lastAt spot a double click on a row: two
	// clicks on the same sandbox at the same place (a row that moved
	// under the pointer between them is two single clicks).
	lastClick string
	lastRow   int
	lastAt    time.Time
}

// The table's columns, in order, and the fields each shows, one a line
// (a line too wide for its column wraps, and the row grows: the full id,
// image and client always show). The Stop button comes first, so it stays
// in reach however narrow the window; the columns fit a window 800 px
// wide (the Image column takes the width left over), and a selected row's
// id, image and limits also show in a wrapped line below the table. A
// click on a header with an order sorts by it (a second click reverses).
var sandboxColumns = []struct {
	title  string
	width  float32
	fields []string
	order  func(a, b sandboxwatch.Row) int // nil: not sortable
}{
	{"", 70, nil, nil},
	{"Sandbox", 135, []string{"ID", "Language", "Client"}, byClient},
	{"State", 72, []string{"State"}, byState},
	{"Image", 95, []string{"Image"}, byImage},
	{"Usage / limit", 147, []string{"CPU", "Memory", "PIDs"}, byUsage},
	{"Network", 110, []string{"Network", "Traffic"}, byNetwork},
	{"Time", 125, []string{"Age", "Expires", "Timeout"}, byAge},
}

// selectText is what the line below the table says while no row is
// selected.
const selectText = "Select a sandbox to see its full id, image and limits; double-click it (or Details…) for what ran in it and its files."

// DoubleClick is how soon a second click on a row opens its details.
const DoubleClick = 500 * time.Millisecond

// emptyText is what the tab says when there is no sandbox.
const emptyText = "No sandboxes are running. They appear here as soon as an AI client creates one."

// sandboxLines is how many lines of text a row holds at least.
const sandboxLines = 3

func newSandboxesTab(w *Window, act SandboxActions) *SandboxesTab {
	t := &SandboxesTab{w: w, act: act, stopping: map[string]bool{}, open: map[string]*Details{}, sortCol: -1}
	cols := make([]column, len(sandboxColumns))
	for i, c := range sandboxColumns {
		cols[i] = column{title: c.title, width: c.width}
	}
	cols[0].buttons = []columnButton{{
		label: func(id string) string {
			if t.stopping[id] {
				return "Stopping…"
			}
			return "Stop"
		},
		tap:      func(id string) { t.askStop(id, t.w.win) },
		disabled: func(id string) bool { return t.stopping[id] },
	}}
	t.grid = newGrid(cols, func() int { return len(t.shown) }, func(row int) string { return t.shown[row].ID }, t.cell)
	t.grid.grow = "Image"
	t.grid.lines = sandboxLines
	t.grid.selected = func() string { return t.selected }
	t.grid.header, t.grid.tapHeader = t.headerText, t.SortBy
	t.details = wrapped(selectText)
	t.grid.table.OnSelected = func(id widget.TableCellID) {
		if key, ok := t.grid.Key(id.Row); ok {
			t.selected = key
			t.showDetails()
			t.grid.selectionMoved()
			// A second click on the row soon after opens its details.
			if key == t.lastClick && id.Row == t.lastRow && time.Since(t.lastAt) < DoubleClick {
				t.OpenDetails(key)
			}
			t.lastClick, t.lastRow, t.lastAt = key, id.Row, time.Now()
		}
		t.grid.table.Unselect(id) // so that the next click is seen
	}
	t.openBtn = widget.NewButtonWithIcon("Details…", theme.InfoIcon(), func() {
		if t.selected != "" {
			t.OpenDetails(t.selected)
		}
	})
	t.openBtn.Disable()
	t.stopSel = widget.NewButtonWithIcon("Stop sandbox", theme.MediaStopIcon(), func() {
		if t.selected != "" {
			t.askStop(t.selected, t.w.win)
		}
	})
	t.stopSel.Disable()
	t.clients = widget.NewSelect([]string{allClients}, t.SetClient)
	t.clients.SetSelected(allClients)
	t.summary = wrapped("")
	t.errLabel = wrapped("")
	t.errLabel.Importance = widget.DangerImportance
	t.errLabel.Hide()
	t.empty = wrapped(emptyText)
	t.empty.Alignment = fyne.TextAlignCenter
	t.empty.TextStyle = fyne.TextStyle{Italic: true}
	t.stopAll = widget.NewButtonWithIcon("Stop all", theme.MediaStopIcon(), t.confirmStopAll)
	t.stopAll.Importance = widget.DangerImportance
	pick := container.New(&fixedWidth{width: clientsWidth}, t.clients)
	t.top = container.NewVBox(container.NewBorder(nil, nil, pick, t.stopAll, t.summary), t.errLabel)
	t.content = container.NewBorder(t.top, container.NewBorder(nil, nil, nil, container.NewVBox(container.NewHBox(t.stopSel, t.openBtn)), t.details), nil, nil, container.NewStack(t.grid.content, container.NewVBox(layout.NewSpacer(), t.empty, layout.NewSpacer())))
	t.Set(sandboxwatch.Snapshot{})
	return t
}

// cell is the text of a cell: its column's fields, one a line.
func (t *SandboxesTab) cell(row, col int) string {
	fields := sandboxColumns[col].fields
	lines := make([]string, 0, len(fields))
	for _, f := range fields {
		if v := t.field(row, f); v != "" { // Traffic of a sandbox without a proxy
			lines = append(lines, v)
		}
	}
	return strings.Join(lines, "\n")
}

// field is one value of a row, as the table shows it.
func (t *SandboxesTab) field(row int, name string) string {
	r := t.shown[row]
	now := t.w.o.Now()
	switch name {
	case "State":
		return r.StateLabel()
	case "ID":
		return r.ID
	case "Client":
		return r.ClientLabel()
	case "Language":
		return r.Language
	case "Image":
		return r.Image
	case "Age":
		return r.Age(now) + " old"
	case "CPU":
		return r.CPU()
	case "Memory":
		return r.Memory()
	case "PIDs":
		return r.Pids() + " pids"
	case "Network":
		return r.NetworkSummary()
	case "Traffic":
		return r.TrafficLabel()
	case "Timeout":
		return "timeout " + execTimeout(r.Limits.ExecTimeoutSeconds)
	case "Expires":
		if r.ExpiresAt.IsZero() {
			return "no expiry"
		}
		return "expires " + r.Expires(now)
	}
	return ""
}

// Set shows a new snapshot: its sandboxes in the table, and the warm
// pool only in the count (sandboxwatch.Count).
func (t *SandboxesTab) Set(s sandboxwatch.Snapshot) {
	t.count = s.Count()
	s.Rows = slices.DeleteFunc(slices.Clone(s.Rows), func(r sandboxwatch.Row) bool { return r.Pool })
	t.snap = s
	present := map[string]bool{}
	for _, r := range s.Rows {
		present[r.ID] = true
	}
	for id := range t.stopping {
		if !present[id] {
			delete(t.stopping, id)
		}
	}
	t.redraw()
	for _, d := range t.open {
		d.update(s)
	}
}

// redraw shows the snapshot as the client filter and the order choose.
func (t *SandboxesTab) redraw() {
	s := t.snap
	t.view()
	t.summary.SetText(t.count.String() + ", whichever client started them. Usage updates while this tab is open.")
	if t.client != "" {
		t.summary.SetText(fmt.Sprintf("Showing %d of %s: those %s started.", len(t.shown), t.count, t.client))
	}
	if s.Err != nil && len(s.Rows) == 0 {
		t.summary.SetText("How many sandboxes run is not known while the engine does not answer.")
	}
	if t.place != "" {
		t.summary.SetText("On " + t.place + ": " + t.summary.Text)
	}
	if s.Err != nil {
		t.errLabel.SetText("Cannot list sandboxes: " + s.Err.Error())
		t.errLabel.Show()
	} else {
		t.errLabel.Hide()
	}
	t.top.Refresh() // the error line came or went: lay the table out below it
	t.content.Refresh()
	if len(t.shown) == 0 {
		t.empty.SetText(emptyText)
		if len(s.Rows) > 0 {
			t.empty.SetText("No sandboxes of " + t.client + " are running. Choose " + allClients + " to see the others.")
		}
		if s.Err != nil {
			// Nothing could be listed: that says nothing about what runs.
			t.empty.SetText("The sandboxes cannot be listed while the engine does not answer; those that run go on running.")
		}
		t.empty.Show()
		t.stopAll.Disable()
		if t.count.Warm > 0 {
			t.stopAll.Enable() // Stop all removes the warm pool too
		}
	} else {
		t.empty.Hide()
	}
	if len(s.Rows) > 0 {
		t.stopAll.Enable()
	}
	t.grid.Refresh()
	t.showDetails()
	if q := t.stopAllQ; q != nil && q.open {
		t.liveStopAll()
	}
}

// showDetails writes the selected sandbox out in full, wrapped: nothing of
// it is clipped, whatever the window's width.
func (t *SandboxesTab) showDetails() {
	var r *sandboxwatch.Row
	for i := range t.shown {
		if t.shown[i].ID == t.selected {
			r = &t.shown[i]
		}
	}
	if r != nil {
		now := t.w.o.Now()
		t.details.SetText(fmt.Sprintf("%s · %s · %s · image %s · client %s · CPU %s · memory %s · PIDs %s · workspace %s · network %s · exec timeout %s · expires %s",
			r.ID, r.StateLabel(), r.Language, r.Image, r.ClientLabel(), r.CPU(), r.Memory(), r.Pids(), workspace(r.Limits.WorkspaceMB), r.NetworkSummary(), execTimeout(r.Limits.ExecTimeoutSeconds), r.Expires(now)))
		t.openBtn.Enable()
		t.stopSel.Enable()
		if t.stopping[r.ID] {
			t.stopSel.Disable()
		}
	} else {
		// The selected sandbox went, or the filter hides it: nothing is
		// selected (Stop never acts on a row out of sight).
		t.openBtn.Disable()
		t.stopSel.Disable()
		t.selected = ""
		t.details.SetText(selectText)
	}
	t.content.Refresh() // the details may take more lines: lay the table out above them
}

// workspace is the size /workspace may grow to.
func workspace(mb int) string {
	if mb <= 0 {
		return "–"
	}
	return sandboxwatch.Bytes(uint64(mb) << 20)
}

func execTimeout(s int) string {
	if s <= 0 {
		return "–"
	}
	return fmt.Sprintf("%d s", s)
}

// Snapshot returns what the tab shows.
func (t *SandboxesTab) Snapshot() sandboxwatch.Snapshot { return t.snap }

// Cell returns one value of a row as shown (ID, Client, Language, State,
// Image, Age, CPU, Memory, PIDs, Network, Timeout, Expires), for tests.
func (t *SandboxesTab) Cell(row int, field string) string { return t.field(row, field) }

// TapStop presses the Stop button of the sandbox id, as a person would:
// it asks first.
func (t *SandboxesTab) TapStop(id string) { t.askStop(id, t.w.win) }

// askStop asks, over parent, before stopping the sandbox id.
func (t *SandboxesTab) askStop(id string, parent fyne.Window) {
	what := "the sandbox"
	for _, r := range t.snap.Rows {
		if r.ID == id && r.ClientLabel() != "" {
			what += " " + r.ClientLabel() + " started"
		}
	}
	confirm("Stop sandbox "+id+"?", "This removes "+what+" and everything in it; a client still using it gets an error.",
		"Stop sandbox", parent, func() { t.stop(id) })
}

func (t *SandboxesTab) stop(id string) {
	if t.act.Stop == nil || t.stopping[id] {
		return
	}
	t.stopping[id] = true
	t.grid.Refresh()
	t.showDetails()
	t.w.async(func(ctx context.Context) error { return t.act.Stop(ctx, id) }, func(err error) {
		if err != nil {
			delete(t.stopping, id)
			t.grid.Refresh()
			t.showDetails()
			dialog.ShowError(fmt.Errorf("stop %s: %w", id, err), t.w.win)
		}
	})
}

// confirmStopAll asks before stopping all. The question counts what is
// listed and follows the list while it shows: Stop all stops what is
// listed when it is chosen.
func (t *SandboxesTab) confirmStopAll() {
	msg, verb := t.stopAllText()
	t.stopAllQ = ask("Stop all sandboxes?", msg, verb, t.w.win, t.StopAll)
	t.liveStopAll()
}

// liveStopAll brings the Stop all question up to the list.
func (t *SandboxesTab) liveStopAll() {
	q := t.stopAllQ
	q.set(t.stopAllText())
	q.verb.Enable()
	if t.count == (sandboxwatch.Count{}) {
		q.verb.Disable()
	}
}

// stopAllText is the Stop all question for the count listed now.
func (t *SandboxesTab) stopAllText() (msg, verb string) {
	n := sandboxwatch.Sandboxes(t.count.Sandboxes)
	msg = "This removes " + n + " and everything in them, whichever client started them."
	if t.count.Warm > 0 {
		msg += fmt.Sprintf(" The warm pool (%d kept ready, unused) is emptied too.", t.count.Warm)
	}
	if t.count == (sandboxwatch.Count{}) {
		msg = "No sandbox runs now: there is nothing to stop."
	}
	return msg, "Stop " + n
}

// StopAll stops every sandbox without asking (the dialog asked).
func (t *SandboxesTab) StopAll() {
	if t.act.StopAll == nil {
		return
	}
	for _, r := range t.snap.Rows {
		t.stopping[r.ID] = true
	}
	t.stopAll.Disable()
	t.grid.Refresh()
	t.w.async(t.act.StopAll, func(err error) {
		if err != nil {
			dialog.ShowError(fmt.Errorf("stop all: %w", err), t.w.win)
		}
		if t.count != (sandboxwatch.Count{}) {
			t.stopAll.Enable()
		}
	})
}
