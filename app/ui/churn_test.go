package ui

import (
	"math/rand/v2"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestSandboxesTabSurvivesChurn shows 100 snapshots whose rows come and go —
// a sandbox stopped from the window, by another client, by expiry — on
// the open Sandboxes tab, drawing the window after each, and clicks the
// buttons and rows drawn for the previous snapshot. The window used to
// die with "index out of range" the first time a row it had drawn went
// away: its cells and buttons read the new snapshot by the old row
// numbers.
func TestSandboxesTabSurvivesChurn(t *testing.T) {
	w, f := newWindow(t)
	// The smallest size the window supports: each draw is cheaper, and
	// still more rows than fit.
	w.Window().Resize(fyne.NewSize(800, 560))
	w.SelectTab(TabSandboxes)
	all := sandboxRows().Rows
	for i := range 6 { // more rows than fit, so some are scrolled away
		r := all[i%len(all)]
		r.ID = r.ID[:10] + string(rune('a'+i)) + "x"
		all = append(all, r)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c := w.Window().Canvas()
	// Under -race, where each software draw costs about ten times as
	// much, 20 snapshots (about 25 s there) give the detector the same
	// goroutines to watch; the fast layer draws all 100.
	steps := 100
	if testenv.Race {
		steps = 20
	}
	for step := range steps {
		var rows []sandboxwatch.Row
		for _, r := range all {
			if rng.IntN(3) > 0 {
				rows = append(rows, r)
			}
		}
		if step%7 == 0 {
			rows = nil // everything stopped at once ("Stop all", a pause)
		}
		// The previous snapshot's first Stop button and first row, as the
		// person sees them before the new snapshot lands.
		stop := firstButton(w)
		w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: rows})
		c.Capture()
		if stop != nil && stop.OnTapped != nil && !stop.Disabled() {
			test.Tap(stop) // it asks; the answer comes after the list moved
			w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: rows[:len(rows)/2]})
			test.Tap(dialogButtons(t, w)["Stop sandbox"])
		}
		w.Sandboxes.grid.table.Select(widget.TableCellID{Row: rng.IntN(len(all)), Col: 1})
		c.Capture()
	}
	if len(f.stopped) == 0 {
		t.Fatal("no Stop button was ever tapped: the test did not exercise the buttons")
	}
}

// firstButton is the first visible Stop button the Sandboxes table drew.
func firstButton(w *Window) *widget.Button {
	var found *widget.Button
	walk(w.Sandboxes.content, func(o any) {
		if b, ok := o.(*widget.Button); ok && found == nil && b.Visible() && (b.Text == "Stop") {
			found = b
		}
	})
	return found
}

// walk calls f on o and everything drawn inside it.
func walk(o fyne.CanvasObject, f func(any)) {
	f(o)
	switch v := o.(type) {
	case *fyne.Container:
		for _, c := range v.Objects {
			walk(c, f)
		}
	case fyne.Widget:
		for _, c := range test.WidgetRenderer(v).Objects() {
			walk(c, f)
		}
	}
}
