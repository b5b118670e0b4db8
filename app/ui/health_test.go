package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
)

// missingImage is what health.Check reports for python's image absent
// with pulls off.
func missingImage() *health.Engine {
	return &health.Engine{Problems: []health.Problem{{
		Kind: health.ImageMissing, Language: "python", Image: "python:3.12-slim-bookworm", Blocking: true,
		Table: "images", Key: "python", Pull: true,
		Text: "image python:3.12-slim-bookworm (python) is not present and cannot be pulled (no such host): code in python cannot run; check the engine reaches its registry, or set python = \"IMAGE\" under [images] in /home/me/.config/mcp-sandbox/config.toml to an image this engine has (`docker images` lists them)",
	}}}
}

// A configured language that cannot run: the headline says so (not
// Running), a card says what and offers the fix (a Pull button that pulls
// through the action, and the [images] setting), and all of it fits
// 800×560. Nothing checked yet, or nothing wrong: Running.
func TestStatusShowsHealthCards(t *testing.T) {
	w, _ := newWindow(t)
	var pulled []string
	w.Status.act.Pull = func(ctx context.Context, image string, progress PullProgress) error {
		progress("Downloading: 12 MB of 48 MB")
		pulled = append(pulled, image)
		return nil
	}
	info := statusInfo()
	info.Health = missingImage()
	w.Status.Set(info)
	w.Window().Resize(fyne.NewSize(800, 560))
	if h := w.Status.Headline(); !strings.HasPrefix(h, "Needs attention: code in python cannot run") || strings.Contains(h, "Running") {
		t.Errorf("headline %q, want it to say python cannot run", h)
	}
	var text []string
	var pull *widget.Button
	walk(w.Window().Canvas().Content(), func(o any) {
		switch v := o.(type) {
		case *widget.Label:
			text = append(text, v.Text)
		case *widget.Card:
			text = append(text, v.Title)
		case *widget.RichText:
			text = append(text, v.String())
		case *widget.Button:
			if v.Text == "Pull python:3.12-slim-bookworm" {
				pull = v
			}
		}
	})
	all := strings.Join(text, "\n")
	for _, s := range []string{"python cannot run: its image is missing", "set python = \"…\" under [images]"} {
		if !strings.Contains(all, s) {
			t.Errorf("the Status tab lacks %q:\n%s", s, all)
		}
	}
	if min := w.Window().Content().MinSize(); min.Width > 800 || min.Height > 560 {
		t.Errorf("the window needs at least %v, more than 800×560", min)
	}
	checkNothingCut(t, "missing-image", w.Window().Canvas().Content())
	if shots := os.Getenv("MCP_SANDBOX_SCREENSHOT_DIR"); shots != "" {
		writePNG(t, w.Window().Canvas(), filepath.Join(shots, "status-missing-image-800x560.png"))
	}
	golden(t, w, "status-missing-image")
	if pull == nil {
		t.Fatal("no Pull button")
	}
	test.Tap(pull)
	if strings.Join(pulled, ",") != "python:3.12-slim-bookworm" || pull.Text != "Pulled python:3.12-slim-bookworm" {
		t.Errorf("Pull pulled %v, button %q", pulled, pull.Text)
	}

	for _, h := range []*health.Engine{nil, {}} {
		info.Health = h
		w.Status.Set(info)
		if got := w.Status.Headline(); !strings.HasPrefix(got, "Running") {
			t.Errorf("health %+v: headline %q, want Running", h, got)
		}
	}
}
