package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// showPreviews lists the sandbox's previews (sandbox_expose), each with a
// button that opens it in the browser; the part hides when there are
// none. The URLs were made by the Lister from the record's port numbers
// (always http://127.0.0.1:PORT/), not read as text.
func (d *Details) showPreviews(ps []preview.Exposure) {
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
		open := widget.NewButtonWithIcon("Open in browser", theme.ComputerIcon(), func() { d.openPreview(p.Port, u) })
		line := widget.NewLabel("port " + strconv.Itoa(p.Port) + " → " + p.URL)
		d.previews.Add(container.NewBorder(nil, nil, nil, open, line))
	}
	d.previews.Show()
}

// openPreview opens the preview at u in the browser, unless it answers
// that nothing listens on its port any more: then it says the preview
// closed (the server drops it from the sandbox's list) instead of
// opening a page of error.
func (d *Details) openPreview(port int, u *url.URL) {
	var gone bool
	d.t.w.async(func(ctx context.Context) error {
		gone = previewGone(ctx, u)
		return nil
	}, func(error) {
		if gone {
			dialog.ShowInformation("Preview closed", fmt.Sprintf("Nothing listens on port %d in the sandbox any more, so its preview is closed. Ask the AI client to start its program and expose the port again.", port), d.win)
			return
		}
		d.t.w.openURL(u, d.win)
	})
}

// previewGone asks the preview at u whether its program still listens:
// the preview answers 502 with "nothing listens" once it ended.
func previewGone(ctx context.Context, u *url.URL) bool {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodHead, u.String(), nil)
	if err != nil {
		return false
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return false // the browser will say what it finds
	}
	defer resp.Body.Close()
	return resp.StatusCode == http.StatusBadGateway && resp.Header.Get(preview.ClosedHeader) != ""
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
