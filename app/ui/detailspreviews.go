package ui

import (
	"fmt"
	"net/url"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
)

// showPreviews lists the sandbox's previews (sandbox_expose), each with a
// button that opens it in the browser; the part hides when there are
// none. The URLs were made by the Lister from the record's port numbers
// (always http://127.0.0.1:PORT/), not read as text.
func (d *Details) showPreviews(ps []sandbox.Exposure) {
	d.previews.RemoveAll()
	if len(ps) == 0 || d.gone {
		d.previews.Hide()
		return
	}
	d.previews.Add(heading("Previews"))
	for _, p := range ps {
		u, err := url.Parse(p.URL)
		if err != nil {
			continue
		}
		open := widget.NewButtonWithIcon("Open in browser", theme.ComputerIcon(), func() { d.t.w.openURL(u, d.win) })
		line := widget.NewLabel("port " + strconv.Itoa(p.Port) + " → " + p.URL)
		d.previews.Add(container.NewBorder(nil, nil, nil, open, line))
	}
	d.previews.Show()
}

// openURL opens u in the browser (Options.OpenURL in tests); a failure
// is shown over parent.
func (w *Window) openURL(u *url.URL, parent fyne.Window) {
	var err error
	if w.o.OpenURL != nil {
		err = w.o.OpenURL(u)
	} else {
		err = fyne.CurrentApp().OpenURL(u)
	}
	if err != nil {
		dialog.ShowError(fmt.Errorf("open %s in the browser: %w", u, err), parent)
	}
}
