package ui

import (
	"context"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
)

// imagePicker is "Choose a local image…": the engine's images, a filter
// (Enter uses the image typed, or the first shown), and a line that says
// how the last choice went. A choice is tried before anything is written;
// one that fails says why and the list stays for another.
type imagePicker struct {
	t        *StatusTab
	language string
	all      []health.LocalImage
	shown    []health.LocalImage
	filter   *widget.Entry
	list     *widget.List
	status   *widget.Label
	d        *dialog.CustomDialog
	busy     bool // a choice is being tried
}

// chooseImage reads the engine's images and shows the picker for
// language.
func (t *StatusTab) chooseImage(language string) {
	var images []health.LocalImage
	t.w.async(func(ctx context.Context) error {
		var err error
		images, err = t.act.Images(ctx)
		return err
	}, func(err error) {
		if err != nil {
			dialog.ShowError(err, t.w.win)
			return
		}
		p := &imagePicker{t: t, language: language, all: images}
		p.show()
	})
}

func (p *imagePicker) show() {
	p.status = wrapped("Only an image in which " + p.language + " runs is written to the config file.")
	p.filter = widget.NewEntry()
	p.filter.SetPlaceHolder("Filter, or type an image and press Enter")
	p.filter.OnChanged = func(string) { p.refilter() }
	p.filter.OnSubmitted = p.submit
	p.list = widget.NewList(func() int { return len(p.shown) },
		func() fyne.CanvasObject { return widget.NewLabel("") },
		func(i widget.ListItemID, o fyne.CanvasObject) { o.(*widget.Label).SetText(imageRow(p.shown[i])) })
	p.list.OnSelected = func(i widget.ListItemID) {
		p.list.UnselectAll()
		p.pick(p.shown[i].Ref)
	}
	p.refilter()
	if len(p.all) == 0 {
		p.status.SetText("This engine has no images: pull one (`docker pull …`) or build one, then choose again.")
	}
	body := container.NewBorder(p.filter, p.status, nil, nil, p.list)
	p.d = dialog.NewCustomWithoutButtons("Choose an image for "+p.language, body, p.t.w.win)
	p.d.SetButtons([]fyne.CanvasObject{widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), p.d.Hide)})
	p.d.Resize(fyne.NewSize(560, 400))
	p.d.Show()
	p.t.w.win.Canvas().Focus(p.filter)
}

// imageRow is a line of the list: the image and its size.
func imageRow(im health.LocalImage) string {
	return im.Ref + "   " + sandboxwatch.Bytes(uint64(max(im.Size, 0)))
}

// refilter shows the images whose name holds the filter's text.
func (p *imagePicker) refilter() {
	q := strings.ToLower(strings.TrimSpace(p.filter.Text))
	p.shown = p.shown[:0]
	for _, im := range p.all {
		if strings.Contains(strings.ToLower(im.Ref), q) {
			p.shown = append(p.shown, im)
		}
	}
	p.list.Refresh()
}

// submit is Enter in the filter: the image named exactly, else the first
// shown.
func (p *imagePicker) submit(text string) {
	text = strings.TrimSpace(text)
	for _, im := range p.shown {
		if im.Ref == text {
			p.pick(im.Ref)
			return
		}
	}
	if len(p.shown) > 0 {
		p.pick(p.shown[0].Ref)
	}
}

// pick tries ref for the language; the picker closes once it is written,
// and says why not otherwise.
func (p *imagePicker) pick(ref string) {
	if p.busy {
		return
	}
	p.busy = true
	p.status.SetText("Checking that " + p.language + " runs in " + ref + "…")
	var msg string
	p.t.w.async(func(ctx context.Context) error {
		var err error
		msg, err = p.t.act.Use(ctx, p.language, ref)
		return err
	}, func(err error) {
		p.busy = false
		if err != nil {
			p.status.SetText(err.Error())
			return
		}
		p.d.Hide()
		p.t.chosen = msg
		p.t.rebuild()
	})
}
