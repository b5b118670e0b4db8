package ui

import (
	"net/url"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
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
	snap.Rows[0].Exposed[0] = sandbox.Exposure{Port: 5000, HostPort: 41234, URL: "http://127.0.0.1:41234/"}
	snap.Rows[0].Exposed[1] = sandbox.Exposure{Port: 8000, HostPort: 41999, URL: "http://127.0.0.1:41999/"}
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

	snap.Rows[0].Exposed = [len(snap.Rows[0].Exposed)]sandbox.Exposure{}
	w.Sandboxes.Set(snap)
	if d.previews.Visible() || len(previewButtons(d)) != 0 {
		t.Error("the previews part stays after the previews closed")
	}
}
