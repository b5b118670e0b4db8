package ui

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/preview"
)

// previewButtons returns the "Open in browser" buttons of d's previews.
func previewButtons(d *Details) []*widget.Button {
	var out []*widget.Button
	for _, o := range d.previews.Objects {
		if c, ok := o.(*fyne.Container); ok {
			for _, o := range c.Objects {
				if b, ok := o.(*widget.Button); ok {
					out = append(out, b)
				}
			}
		}
	}
	return out
}

// TestDetailsPreviews: the details view lists a sandbox's previews (from
// its record, as the Lister read it), each with a button that opens its
// URL in the browser; when the previews close, the part goes.
func TestDetailsPreviews(t *testing.T) {
	w, _ := newWindow(t)
	var opened []string
	w.o.OpenURL = func(u *url.URL) error { opened = append(opened, u.String()); return nil }
	w.Sandboxes.act.Details = (&detailsFakes{}).actions()
	w.SelectTab(TabSandboxes)
	snap := sandboxRows()
	snap.Rows[0].Exposed[0] = preview.Exposure{Port: 5000, HostPort: 41234, URL: "http://127.0.0.1:41234/"}
	snap.Rows[0].Exposed[1] = preview.Exposure{Port: 8000, HostPort: 41999, URL: "http://127.0.0.1:41999/"}
	w.Sandboxes.Set(snap)
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	d.Window().Resize(fyne.NewSize(780, 720))
	goldenCanvas(t, d.Window().Canvas(), "details-previews")

	buttons := previewButtons(d)
	if len(buttons) != 2 || !d.previews.Visible() {
		t.Fatalf("%d preview buttons (visible %v), want 2", len(buttons), d.previews.Visible())
	}
	test.Tap(buttons[1])
	if strings.Join(opened, " ") != "http://127.0.0.1:41999/" {
		t.Errorf("opened %q, want the second preview's URL", opened)
	}

	snap.Rows[0].Exposed = [len(snap.Rows[0].Exposed)]preview.Exposure{}
	w.Sandboxes.Set(snap)
	if d.previews.Visible() || len(previewButtons(d)) != 0 {
		t.Error("the previews part stays after the previews closed")
	}
}

// A preview whose program ended is not opened: its 502 says it closed,
// and the view says so instead of sending the browser to an error page.
func TestDetailsPreviewGone(t *testing.T) {
	gone := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(preview.ClosedHeader, "nothing listens")
		w.WriteHeader(http.StatusBadGateway)
	}))
	defer gone.Close()
	w, _ := newWindow(t)
	var opened []string
	w.o.OpenURL = func(u *url.URL) error { opened = append(opened, u.String()); return nil }
	w.Sandboxes.act.Details = (&detailsFakes{}).actions()
	snap := sandboxRows()
	snap.Rows[0].Exposed[0] = preview.Exposure{Port: 5000, URL: gone.URL + "/"}
	w.Sandboxes.Set(snap)
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	test.Tap(previewButtons(d)[0])
	if len(opened) != 0 {
		t.Errorf("opened %v: a closed preview went to the browser", opened)
	}
	if top := d.Window().Canvas().Overlays().Top(); top == nil || !strings.Contains(overlayText(top), "Nothing listens on port 5000") {
		t.Error("the view does not say the preview closed")
	}
}
