package ui

import (
	"context"
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
)

// A language whose image is missing offers "Choose a local image…" on
// its checklist line (a language that runs does not): it lists the
// engine's images, a choice that fails says why and keeps the list, and
// one that runs is written through Use, closes the list and says so.
func TestStatusChooseLocalImage(t *testing.T) {
	w, _ := newWindow(t)
	var used []string
	w.Status.act.Images = func(context.Context) ([]health.LocalImage, error) {
		return []health.LocalImage{
			{Ref: "mcp-sandbox-test/busybox:1", Size: 2 << 20},
			{Ref: "mcp-sandbox-test/python-plot:3", Size: 1 << 30},
			{Ref: "mcp-sandbox-test/python:3", Size: 191 << 20},
		}, nil
	}
	w.Status.act.Use = func(_ context.Context, lang, ref string) (string, error) {
		used = append(used, lang+"="+ref)
		if strings.Contains(ref, "busybox") {
			return "", errors.New("python3: not found in " + ref + " — choose another")
		}
		return "python runs in " + ref + ": set python under [images]. Checking again…", nil
	}
	info := statusInfo()
	info.Health = missingImage()
	info.Health.Images = []health.Image{
		{Language: "python", Image: "python:3.12-slim-bookworm"},
		{Language: "bash", Image: "debian:bookworm-slim", Present: true, Runnable: true},
	}
	w.Status.Set(info)
	var choose []*widget.Button
	walk(w.Status.content, func(o any) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Choose a local image…" {
			choose = append(choose, b)
		}
	})
	if len(choose) != 1 {
		t.Fatalf("%d Choose buttons, want one (python's)", len(choose))
	}
	test.Tap(choose[0])
	top := w.Window().Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no list of images")
	}
	var filter *widget.Entry
	var list *widget.List
	walk(top, func(o any) {
		switch v := o.(type) {
		case *widget.Entry:
			filter = v
		case *widget.List:
			list = v
		}
	})
	if text := overlayText(top); !strings.Contains(text, "mcp-sandbox-test/python:3   191 MB") {
		t.Errorf("the list does not show python:3 and its size:\n%s", text)
	}
	list.Select(0) // busybox
	if text := overlayText(w.Window().Canvas().Overlays().Top()); !strings.Contains(text, "python3: not found in mcp-sandbox-test/busybox:1 — choose another") {
		t.Errorf("a refused image does not say why:\n%s", text)
	}
	filter.SetText("python:3")
	if n := list.Length(); n != 1 {
		t.Errorf("the filter python:3 shows %d images, want 1", n)
	}
	filter.OnSubmitted(filter.Text)
	if want := "python=mcp-sandbox-test/busybox:1,python=mcp-sandbox-test/python:3"; strings.Join(used, ",") != want {
		t.Errorf("Use got %v, want %s", used, want)
	}
	if w.Window().Canvas().Overlays().Top() != nil {
		t.Error("the list stays open after an image was written")
	}
	if !strings.Contains(statusWords(w), "python runs in mcp-sandbox-test/python:3") {
		t.Errorf("the checklist does not say what was written:\n%s", statusWords(w))
	}
}
