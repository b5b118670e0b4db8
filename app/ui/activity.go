package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// ActivityActions read the audit log every server appends to.
type ActivityActions struct {
	// Read returns up to limit entries, newest first.
	Read func(limit int) ([]state.AuditEntry, error)
}

// ActivityTab shows the audit log, newest first, filterable.
type ActivityTab struct {
	w       *Window
	act     ActivityActions
	content fyne.CanvasObject

	all      []state.AuditEntry
	shown    []state.AuditEntry
	filter   *widget.Entry
	errsOnly *widget.Check
	grid     *grid
	summary  *widget.Label
	top      *fyne.Container
	call     dialog.Dialog // the call last opened (activitycall.go)
}

// activityLimit bounds how many entries the tab reads.
const activityLimit = 2000

// The columns fit a window 800 px wide; the summary wraps (the row grows)
// and shows whole.
var activityColumns = []string{"Time", "Client / tool", "Sandbox", "Summary", "Result"}

func newActivityTab(w *Window, act ActivityActions) *ActivityTab {
	t := &ActivityTab{w: w, act: act}
	widths := []float32{95, 150, 115, 295, 105}
	cols := make([]column, len(activityColumns))
	for i, title := range activityColumns {
		cols[i] = column{title: title, width: widths[i]}
	}
	t.grid = newGrid(cols, func() int { return len(t.shown) }, func(row int) string { return strconv.Itoa(row) }, t.cell)
	t.grid.grow = "Summary"
	t.grid.lines = 2
	// A click on a row opens the call it describes; the row is looked up
	// by the key the grid drew it with.
	t.grid.table.OnSelected = func(id widget.TableCellID) {
		t.grid.table.Unselect(id)
		if key, ok := t.grid.Key(id.Row); ok {
			if row, err := strconv.Atoi(key); err == nil {
				t.OpenCall(row)
			}
		}
	}
	t.filter = widget.NewEntry()
	t.filter.SetPlaceHolder("Filter by client, tool, sandbox or text")
	t.filter.OnChanged = func(string) { t.apply() }
	t.errsOnly = widget.NewCheck("Errors only", func(bool) { t.apply() })
	t.summary = widget.NewLabel("")
	t.top = container.NewBorder(nil, nil, nil, container.NewHBox(t.errsOnly, t.summary), t.filter)
	t.content = container.NewBorder(t.top, nil, nil, nil, t.grid.content)
	return t
}

func (t *ActivityTab) cell(row, col int) string {
	e := t.shown[row]
	switch activityColumns[col] {
	case "Time":
		return e.Time.Local().Format("2006-01-02\n15:04:05")
	case "Client / tool":
		return orDash(clientconfig.DisplayForMCPName(e.Client)) + "\n" + e.Tool
	case "Sandbox":
		return orDash(e.SandboxID)
	case "Summary":
		if isNetwork(e) {
			return orDash(netSummary(e))
		}
		s := strings.ReplaceAll(e.Summary, "\n", " ⏎ ")
		if e.Error && s == "" {
			s = "error"
		}
		return orDash(s)
	case "Result":
		return outcome(e) + "\n" + fmtDuration(time.Duration(e.DurationMS)*time.Millisecond)
	}
	return ""
}

func fmtDuration(d time.Duration) string {
	switch {
	case d < time.Second:
		return fmt.Sprintf("%d ms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	return fmt.Sprintf("%d min %d s", int(d.Minutes()), int(d.Seconds())%60)
}

// outcome says in words how a call ended: "ok", "failed (exit 2)",
// "timed out", "out of memory", "cancelled", "failed"; a connection's
// entry says "allowed", "refused" or "failed". A command killed for its
// time says so, not the exit code the kill left.
func outcome(e state.AuditEntry) string {
	switch {
	case isNetwork(e):
		return netResult(e)
	case e.TimedOut:
		return "timed out"
	case e.OOMKilled:
		return "out of memory"
	case e.Cancelled || (e.Error && cancelledText(e.ErrorText)):
		return "cancelled"
	case e.ExitCode != nil && *e.ExitCode != 0:
		return "failed (exit " + strconv.Itoa(*e.ExitCode) + ")"
	case e.Error:
		return "failed"
	}
	return "ok"
}

// cancelledText spots a cancellation in the answer of a call logged
// before the log said so itself.
func cancelledText(s string) bool {
	s = strings.ToLower(s)
	return strings.Contains(s, "context canceled") || strings.Contains(s, "cancelled")
}

// chronological orders entries newest first by the time the table shows:
// when each call started. The log holds them in the order they ended.
func chronological(entries []state.AuditEntry) []state.AuditEntry {
	slices.SortStableFunc(entries, func(a, b state.AuditEntry) int { return b.Time.Compare(a.Time) })
	return entries
}

// problem says whether "Errors only" shows e: a failed call, a command
// that exited non-zero, or a connection refused or failed.
func problem(e state.AuditEntry) bool {
	if isNetwork(e) {
		r := netResult(e)
		return r == "refused" || r == "failed"
	}
	return e.Failed() || (e.ExitCode != nil && *e.ExitCode != 0)
}

// Reload reads the audit log again.
func (t *ActivityTab) Reload() {
	if t.act.Read == nil {
		return
	}
	var entries []state.AuditEntry
	t.w.async(func(context.Context) error {
		var err error
		entries, err = t.act.Read(activityLimit)
		return err
	}, func(err error) {
		if err != nil {
			t.summary.SetText("cannot read the log: " + err.Error())
			return
		}
		t.all = chronological(entries)
		t.apply()
	})
}

// Shown returns the entries the table shows, for tests.
func (t *ActivityTab) Shown() []state.AuditEntry { return t.shown }

// SetFilter types s into the filter box.
func (t *ActivityTab) SetFilter(s string) { t.filter.SetText(s) }

func (t *ActivityTab) apply() {
	q := strings.ToLower(strings.TrimSpace(t.filter.Text))
	t.shown = t.shown[:0]
	for _, e := range t.all {
		if t.errsOnly.Checked && !problem(e) {
			continue
		}
		if q != "" && !strings.Contains(strings.ToLower(strings.Join([]string{e.Client, e.Tool, e.SandboxID, e.Summary}, "\x00")), q) {
			continue
		}
		t.shown = append(t.shown, e)
	}
	if len(t.all) == len(t.shown) {
		t.summary.SetText(plural(len(t.all), "call", "calls"))
	} else {
		t.summary.SetText(fmt.Sprintf("%d of %s", len(t.shown), plural(len(t.all), "call", "calls")))
	}
	t.top.Refresh() // the summary's width changed
	t.grid.Refresh()
}
