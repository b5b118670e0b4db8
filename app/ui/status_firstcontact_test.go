package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// statusWords is every label, card title and rich text of the Status tab.
func statusWords(w *Window) string {
	var b strings.Builder
	walk(w.Status.content, func(o any) {
		switch v := o.(type) {
		case *widget.Card:
			b.WriteString(v.Title + "\n")
		case *widget.Label:
			b.WriteString(v.Text + "\n")
		case *widget.RichText:
			b.WriteString(v.String() + "\n")
		}
	})
	return b.String()
}

// The places detection tried are listed only when detection chose: with
// DOCKER_HOST (or docker.host, or a context) naming an engine that
// answers, there is no list of sockets where nothing is.
func TestStatusEndpointsOnlyWhenDetected(t *testing.T) {
	w, _ := newWindow(t)
	w.Status.Set(statusInfo())
	if !strings.Contains(statusWords(w), "Endpoints tried") {
		t.Fatal("detection chose, and the places it tried are not listed")
	}
	info := statusInfo()
	info.Docker = &dockerhost.Result{
		Candidates: []dockerhost.Candidate{
			{Host: "unix:///run/podman/podman.sock", Source: "DOCKER_HOST", Explicit: true, OK: true, Engine: "Podman"},
			{Host: "unix:///home/me/.docker/run/docker.sock", Source: "Docker Desktop", Missing: true},
		},
		Reason: "DOCKER_HOST is set",
	}
	info.Docker.Chosen = &info.Docker.Candidates[0]
	w.Status.Set(info)
	if text := statusWords(w); strings.Contains(text, "Endpoints tried") || strings.Contains(text, "Nothing at") {
		t.Errorf("DOCKER_HOST chose, and the tab lists the places detection would try:\n%s", text)
	}
}

// Backticks in a fix are shown as code, not as backticks.
func TestStatusShowsCodeNotBackticks(t *testing.T) {
	w, _ := newWindow(t)
	info := statusInfo()
	info.Docker.Hint = "Start Docker (`sudo systemctl start docker`)."
	info.Docker.Chosen = nil
	w.Status.Set(info)
	text := statusWords(w)
	if !strings.Contains(text, "Start Docker (sudo systemctl start docker).") || strings.Contains(text, "`") {
		t.Errorf("the hint shows backticks or lost its words:\n%s", text)
	}
	r, ok := prose("run `docker pull x` now").(*widget.RichText)
	if !ok || len(r.Segments) != 3 || r.Segments[1].(*widget.TextSegment).Style != widget.RichTextStyleCodeInline {
		t.Errorf("prose segments %#v, want text, code, text", r)
	}
	if l, ok := prose("a lone ` stays").(*widget.Label); !ok || l.Text != "a lone ` stays" {
		t.Errorf("a lone backtick: %#v", l)
	}
}
