package ui

import (
	"strings"
	"testing"

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
		{"lost", lost, "Docker not reachable: the engine stopped answering: EOF"},
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
