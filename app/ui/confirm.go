package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// question is a destructive question on screen. Its buttons say what they
// do: Cancel, and the verb (never "No" and "Yes"). Cancel is the default
// (the emphasised button, and the one Space or Enter presses); the verb is
// shown as dangerous and is never the default. Its text and verb can
// change while it shows, so a count in it stays live.
type question struct {
	d      *dialog.CustomDialog
	msg    *widget.Label
	verb   *widget.Button
	cancel *widget.Button
	open   bool // until either button closes it
}

// ask shows a question; do runs if the person chooses verb.
func ask(title, msg, verb string, parent fyne.Window, do func()) *question {
	q := &question{msg: wrapped(msg)}
	q.d = dialog.NewCustomWithoutButtons(title, q.msg, parent)
	q.cancel = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), q.d.Hide)
	q.cancel.Importance = widget.HighImportance
	q.verb = widget.NewButtonWithIcon(verb, theme.DeleteIcon(), func() {
		q.d.Hide()
		do()
	})
	q.verb.Importance = widget.DangerImportance
	q.d.SetButtons([]fyne.CanvasObject{q.cancel, q.verb})
	q.open = true
	q.d.SetOnClosed(func() { q.open = false })
	q.d.Resize(fyne.NewSize(480, 0))
	q.d.Show()
	parent.Canvas().Focus(q.cancel)
	return q
}

// confirm asks a question that does not change while it shows.
func confirm(title, msg, verb string, parent fyne.Window, do func()) {
	ask(title, msg, verb, parent, do)
}

// set changes the question's text and verb while it shows.
func (q *question) set(msg, verb string) {
	q.msg.SetText(msg)
	q.verb.SetText(verb)
}
