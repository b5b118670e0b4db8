package ui

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
)

// The headline follows the engine: Running while it answers, not once it
// stops answering (Lost) nor while the explicit choice does not answer,
// and Running again once it answers.
func TestStatusHeadlineDockerLost(t *testing.T) {
	w, _ := newWindow(t)
	running := statusInfo()
	lost := running
	lost.Lost = "the engine stopped answering: EOF"
	lost.Sandboxes = 0
	unusable := running
	unusable.Docker = &dockerhost.Result{
		Candidates: []dockerhost.Candidate{{Host: "unix:///run/proxy.sock", Source: "DOCKER_HOST", Error: "connection refused"}},
		Reason:     "DOCKER_HOST is set and does not answer",
	}
	unusable.Sandboxes = 0
	steps := []struct {
		name string
		info StatusInfo
		want string
	}{
		{"running", running, "Running · Colima 27.4.0 · 2 sandboxes"},
		{"lost", lost, "Docker stopped answering"},
		{"looked again", unusable, "Docker not"},
		{"back", running, "Running · Colima 27.4.0 · 2 sandboxes"},
	}
	for _, s := range steps {
		w.Status.Set(s.info)
		got := w.Status.Headline()
		if !strings.HasPrefix(got, s.want) {
			t.Errorf("%s: headline %q, want it to start %q", s.name, got, s.want)
		}
		if s.name != "running" && s.name != "back" && strings.Contains(got, "Running") {
			t.Errorf("%s: headline %q says Running", s.name, got)
		}
	}
}

// Docker lost, with a long error and a live sandbox: the window still fits
// 800×560 (the headline wraps), says what to do in plain words, offers no
// Pause it cannot carry out, and the Sandboxes tab does not claim that
// nothing runs.
func TestDockerLostFitsAndSaysWhatToDo(t *testing.T) {
	w, _ := newWindow(t)
	info := statusInfo()
	info.Lost = "error during connect: Get \"http://%2Fhome%2Fme%2F.colima%2Fdefault%2Fdocker.sock/v1.47/events\": read unix @->/home/me/.colima/default/docker.sock: read: connection reset by peer: unexpected EOF"
	w.Status.Set(info)
	w.Sandboxes.Set(sandboxwatch.Snapshot{Err: errors.New("Docker is not reachable")})
	w.Window().Resize(fyne.NewSize(800, 560))
	for _, tab := range []string{TabStatus, TabSandboxes} {
		w.SelectTab(tab)
		if min := w.Window().Content().MinSize(); min.Width > 800 || min.Height > 560 {
			t.Errorf("%s: the window needs at least %v, more than 800×560", tab, min)
		}
	}
	if h := w.Status.Headline(); strings.Contains(h, "EOF") || !strings.HasPrefix(h, "Docker stopped answering") {
		t.Errorf("headline %q", h)
	}
	if !w.Status.pauseBtn.Disabled() {
		t.Error("Pause is offered while the engine does not answer")
	}
	if strings.Contains(w.Sandboxes.empty.Text, "No sandboxes are running") {
		t.Errorf("the Sandboxes tab says %q while nothing could be listed", w.Sandboxes.empty.Text)
	}
	w.SelectTab(TabStatus)
	checkNothingCut(t, "docker-lost", w.Window().Canvas().Content())
	if shots := os.Getenv("MCP_SANDBOX_SCREENSHOT_DIR"); shots != "" {
		writePNG(t, w.Window().Canvas(), filepath.Join(shots, "status-docker-lost-800x560.png"))
	}
}

// Counts coming and going change the headline and nothing else: the tab
// is not built again (under churn it was, five times a second, and Fyne's
// renderer cache kept a minute of the discarded widgets). Anything else
// new, or the checklist's inputs from the other tabs, builds it again.
func TestStatusCountsOnlyTouchTheHeadline(t *testing.T) {
	w, _ := newWindow(t)
	info := statusInfo()
	w.Status.Set(info)
	body := w.Status.content.Content

	more := info
	more.Sandboxes, more.Warm = 7, 1
	w.Status.Set(more)
	if w.Status.content.Content != body {
		t.Error("new counts built the tab again")
	}
	if got := w.Status.Headline(); !strings.Contains(got, "7 sandboxes") {
		t.Errorf("headline %q does not say the new count", got)
	}
	if w.Status.info.Count() != more.Count() {
		t.Errorf("the tab keeps counts %v, want %v (the pause question reads them)", w.Status.info.Count(), more.Count())
	}

	paused := more
	paused.Paused = true
	w.Status.Set(paused)
	if w.Status.content.Content == body {
		t.Error("pausing did not build the tab again")
	}
	body = w.Status.content.Content
	w.Clients.SetServers([]ServerRow{{Clients: []string{"Cursor"}, PID: 10, Transport: "stdio", Sandboxes: 1}})
	if w.Status.content.Content == body {
		t.Error("a client connecting did not build the checklist again")
	}
	if !strings.Contains(allText(w.Status.content.Content), "Cursor connected") {
		t.Errorf("checklist %q does not say Cursor is connected", allText(w.Status.content.Content))
	}
	body = w.Status.content.Content
	w.Clients.SetServers([]ServerRow{{Clients: []string{"Cursor"}, PID: 10, Transport: "stdio", Sandboxes: 4}, {PID: 11, Transport: "stdio"}})
	if w.Status.content.Content != body {
		t.Error("new counts and a server with no client yet built the checklist again (it says only who is connected)")
	}
	w.Clients.SetServers(nil)
	if w.Status.content.Content == body {
		t.Error("the last client leaving did not build the checklist again")
	}

	cluster := paused
	cluster.Cluster = &ClusterInfo{Place: "cluster a · namespace b", Answered: true}
	w.Status.Set(cluster)
	body = w.Status.content.Content
	same := cluster
	same.Cluster = &ClusterInfo{Place: "cluster a · namespace b", Answered: true}
	same.Sandboxes = 3
	w.Status.Set(same)
	if w.Status.content.Content != body {
		t.Error("an equal cluster (a new pointer) and new counts built the tab again")
	}
	other := same
	other.Cluster = &ClusterInfo{Place: "cluster a · namespace b", Err: "timeout"}
	w.Status.Set(other)
	if w.Status.content.Content == body {
		t.Error("a cluster that stopped answering did not build the tab again")
	}
}
