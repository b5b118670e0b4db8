package ui

import (
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// OpenCall shows the call of the row'th shown entry in a dialog: its
// summary (the arguments, as the server noted them) whole, tool, client,
// result, duration and error, and a way to the sandbox's details while it
// runs. It returns the dialog, or nil when there is no such row.
func (t *ActivityTab) OpenCall(row int) dialog.Dialog {
	if row < 0 || row >= len(t.shown) {
		return nil
	}
	e := t.shown[row] // a copy: later reloads cannot change it
	d := dialog.NewCustom("Call: "+orDash(cleanText(e.Tool, 64)), "Close", t.callContent(e), t.w.win)
	t.call = d
	d.Resize(fyne.NewSize(640, 480))
	d.Show()
	return d
}

// callContent lays out one audit entry; every string in it came from a
// client or a sandbox and is shown as plain, cleaned text.
func (t *ActivityTab) callContent(e state.AuditEntry) fyne.CanvasObject {
	text := func(s string) *widget.Label {
		l := wrapped(cleanText(s, 4000))
		l.Selectable = true
		return l
	}
	result := outcome(e)
	form := widget.NewForm(
		widget.NewFormItem("Time", text(e.Time.Local().Format("2006-01-02 15:04:05"))),
		widget.NewFormItem("Client", text(orDash(clientconfig.DisplayForMCPName(e.Client)))),
		widget.NewFormItem("Tool", text(e.Tool)),
		widget.NewFormItem("Result", text(result)),
		widget.NewFormItem("Duration", text(fmtDuration(time.Duration(e.DurationMS)*time.Millisecond))),
	)
	if e.SandboxID != "" {
		form.Append("Sandbox", t.sandboxLink(e.SandboxID))
	}
	if e.Network != nil {
		netForm(form, e.Network, text)
	} else {
		form.Append("Summary", text(orDash(e.Summary)))
	}
	if e.Output != "" {
		out := text(e.Output)
		out.TextStyle.Monospace = true
		form.Append("Output", out)
	}
	if e.ErrorText != "" {
		errLabel := text(e.ErrorText)
		errLabel.Importance = widget.DangerImportance
		form.Append("Error", errLabel)
	}
	return container.NewVScroll(form)
}

// sandboxLink is the sandbox's id with a button to its details, when it
// still runs.
func (t *ActivityTab) sandboxLink(id string) fyne.CanvasObject {
	l := widget.NewLabel(cleanText(id, 64))
	running := false
	for _, r := range t.w.Sandboxes.snap.Rows {
		running = running || r.ID == id
	}
	if !running {
		l.SetText(l.Text + " (gone)")
		return l
	}
	return container.NewHBox(l, widget.NewButton("Open details…", func() {
		if t.call != nil {
			t.call.Hide()
		}
		t.w.Sandboxes.OpenDetails(id)
	}))
}
