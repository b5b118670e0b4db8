package ui

import (
	"context"
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
)

// PullProgress is one step of a pull the Status tab started: a line for
// people ("Downloading 41.2 MB of 120 MB").
type PullProgress func(line string)

// healthHeadline says what keeps code from running, or "" when nothing
// does (or nothing was checked yet): the headline must not say Running
// then. The tray's title says the same (health.Engine.Attention).
func healthHeadline(h *health.Engine) string {
	if a := h.Attention(); a != "" {
		return "Needs attention: " + a + " (see below)"
	}
	return ""
}

// problemTitle is a card's title: what is wrong, in a few words.
func problemTitle(p health.Problem) string {
	switch p.Kind {
	case health.ImageMissing:
		return p.Language + " cannot run: its image is missing"
	case health.ImageFirstUse:
		return p.Language + ": its image is pulled on first use"
	case health.InterpreterGone:
		return p.Language + " cannot run: its image lacks the interpreter"
	case health.InterpreterSlow:
		return p.Language + ": its image was not checked in time"
	case health.CPUsTooHigh:
		return "The CPU limit is above the engine's CPUs"
	case health.MemoryTooHigh:
		return "The memory limit is above the engine's memory"
	}
	return "Setup"
}

// healthCards are one card per problem, each with its fix: a Pull button
// when pulling the image fixes it, and the setting that picks another
// image.
func (t *StatusTab) healthCards(h *health.Engine) []fyne.CanvasObject {
	if h == nil {
		return nil
	}
	var cards []fyne.CanvasObject
	for _, p := range h.Problems {
		body := []fyne.CanvasObject{prose(p.Text)}
		if p.Pull && t.act.Pull != nil {
			body = append(body, t.pullButton(p.Image))
		}
		if p.Table != "" {
			body = append(body, prose(fmt.Sprintf("To use an image you have instead, set `%s = \"…\"` under [%s] in the config file (Settings, or `docker images` lists what this engine has).", p.Key, p.Table)))
		}
		cards = append(cards, widget.NewCard(problemTitle(p), "", container.NewVBox(body...)))
	}
	return cards
}

// pullButton pulls image through the backend (EnsureImage), showing its
// progress on the button and in a line below it; the checks run again
// when it ends.
func (t *StatusTab) pullButton(image string) fyne.CanvasObject {
	status := wrapped("")
	status.Hide()
	var b *widget.Button
	b = widget.NewButtonWithIcon("Pull "+image, theme.DownloadIcon(), func() {
		b.Disable()
		b.SetText("Pulling " + image + "…")
		status.Show()
		progress := func(line string) { t.w.o.Do(func() { status.SetText(line) }) }
		t.w.async(func(ctx context.Context) error { return t.act.Pull(ctx, image, progress) }, func(err error) {
			if err != nil {
				b.Enable()
				b.SetText("Pull " + image)
				status.SetText("The pull failed: " + err.Error())
				return
			}
			b.SetText("Pulled " + image)
			status.SetText("Pulled. Checking again…")
		})
	})
	b.Importance = widget.HighImportance
	return container.NewVBox(container.NewHBox(b), status)
}
