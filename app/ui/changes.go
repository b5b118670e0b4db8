package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
)

// TabChanges is the tab of the changes to the person's files that wait
// for review (propose_changes).
const TabChanges = "Changes"

// ChangesActions read and decide the proposals waiting for review.
type ChangesActions struct {
	// List returns the proposals waiting for review, oldest first.
	List func() []*proposal.Proposal
	// Decide applies (apply) or rejects proposal id, and says in a line
	// what came of it.
	Decide func(ctx context.Context, id string, apply bool) (string, error)
}

// ChangesTab shows every proposal waiting for review with its whole
// diff, file by file, and Apply and Reject.
type ChangesTab struct {
	w       *Window
	act     ChangesActions
	content fyne.CanvasObject
	box     *fyne.Container
	shown   []*proposal.Proposal
	// Last is what the last decision came to (tests read it).
	Last string
}

func newChangesTab(w *Window, act ChangesActions) *ChangesTab {
	t := &ChangesTab{w: w, act: act, box: container.NewVBox()}
	t.content = container.NewVScroll(t.box)
	t.Reload()
	return t
}

// Reload reads the proposals again and redraws the tab.
func (t *ChangesTab) Reload() {
	if t.act.List == nil {
		return
	}
	t.shown = t.act.List()
	t.box.RemoveAll()
	if len(t.shown) == 0 {
		none := widget.NewLabel("No changes wait for review. When an assistant proposes changes to your files (propose_changes) and its client cannot ask you, they wait here.")
		none.Wrapping = fyne.TextWrapWord
		t.box.Add(none)
	}
	for _, p := range t.shown {
		t.box.Add(t.card(p))
	}
	t.box.Refresh()
}

// Shown is the number of proposals the tab shows.
func (t *ChangesTab) Shown() int { return len(t.shown) }

func (t *ChangesTab) card(p *proposal.Proposal) fyne.CanvasObject {
	sub := fmt.Sprintf("Sandbox %s · %d file(s) · rejected unless applied by %s", printable.Clean(p.SandboxID, printable.NameMax),
		len(p.Files), p.Deadline.Local().Format("15:04"))
	if p.Summary != "" {
		sub = printable.Clean(p.Summary, 300) + " · " + sub
	}
	files := widget.NewAccordion()
	for _, f := range p.Files {
		diff := widget.NewLabelWithStyle(printable.Text(f.Diff, 1<<20), fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
		diff.Wrapping = fyne.TextWrapBreak
		title := fmt.Sprintf("%s  +%d −%d  %s", f.Change, f.Added, f.Removed, printable.Clean(f.HostPath, 500))
		files.Append(widget.NewAccordionItem(title, diff))
	}
	files.MultiOpen = true
	files.OpenAll()
	id := p.ID
	apply := widget.NewButton("Apply", func() { t.Decide(id, true) })
	apply.Importance = widget.HighImportance
	reject := widget.NewButton("Reject", func() { t.Decide(id, false) })
	// The choice comes first: a long diff does not hide it.
	body := container.NewVBox(container.NewHBox(apply, reject), files)
	return widget.NewCard("Changes to "+printable.Clean(p.HostPath, 500), sub, body)
}

// Decide applies or rejects proposal id (the buttons), then shows what
// came of it and reloads.
func (t *ChangesTab) Decide(id string, apply bool) {
	var line string
	t.w.async(func(ctx context.Context) error {
		var err error
		line, err = t.act.Decide(ctx, id, apply)
		return err
	}, func(err error) {
		if err != nil {
			t.Last = err.Error()
			dialog.ShowError(err, t.w.win)
		} else {
			t.Last = line
			dialog.ShowInformation("Changes", line, t.w.win)
		}
		t.Reload()
	})
}
