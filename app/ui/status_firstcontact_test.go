package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// statusWords is every label and card title of the Status tab.
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
	for in, want := range map[string]string{
		"run `docker pull x` now": "run docker pull x now",
		"a lone ` stays":          "a lone ` stays",
		"`a` and `b` and ` c":     "a and b and ` c",
	} {
		if got := prose(in).Text; got != want {
			t.Errorf("prose(%q) = %q, want %q", in, got, want)
		}
	}
}

// The Status tab opens on its checklist: Docker, each language with where
// its fix is, a client connected (the window's own Test is none), the
// Test; the diagnostics follow.
func TestStatusChecklist(t *testing.T) {
	info := statusInfo()
	info.Health = missingImage()
	info.Health.Images = []health.Image{
		{Language: "python", Image: "python:3.12-slim-bookworm"},
		{Language: "bash", Image: "debian:bookworm-slim", Present: true, Runnable: true},
	}
	clients := []ClientRow{{Display: "Cursor", Configured: true}, {Display: "Zed"}}
	lines := func(servers []ServerRow, tested string) []string {
		var out []string
		for _, l := range checklist(info, clients, servers, tested) {
			out = append(out, l.mark+" "+l.text)
		}
		return out
	}
	want := []string{
		"✓ Docker: Colima 27.4.0 answers",
		"✗ python cannot run: its image is missing (fix below)",
		"✓ bash runs (debian:bookworm-slim)",
		"… Cursor configured: it connects when you start it (or restart it)",
		"… Test not run yet: press Test under Bundled server below",
	}
	testOnly := []ServerRow{{Clients: []string{bundled.TestClientName}}}
	if diff := cmp.Diff(want, lines(testOnly, "")); diff != "" {
		t.Errorf("checklist before a client connects (-want +got):\n%s", diff)
	}
	want[3], want[4] = "✓ Claude Code connected", "✓ Test ran "+bundled.TestCode+" through the bundled server"
	if diff := cmp.Diff(want, lines([]ServerRow{{Clients: []string{"Claude Code"}}}, "ok")); diff != "" {
		t.Errorf("checklist once a client connected and Test passed (-want +got):\n%s", diff)
	}

	w, _ := newWindow(t)
	w.Status.Set(info)
	text := statusWords(w)
	if i, j := strings.Index(text, "Getting started"), strings.Index(text, "Endpoints tried"); i < 0 || j < i {
		t.Errorf("the checklist does not come before the diagnostics:\n%s", text)
	}
}
