package ui

import (
	"errors"
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// statusText is every label's text on the Status tab, joined by lines.
func statusText(w *Window) string {
	var b strings.Builder
	walk(w.Status.content.Content, func(o any) {
		if l, ok := o.(*widget.Label); ok {
			b.WriteString(l.Text + "\n")
		}
	})
	return b.String()
}

// On Kubernetes the Status tab names the cluster and namespace where it
// names Docker's engine, in the headline and in a card of its own; a
// cluster that does not answer shows as such, and no line of the tab
// speaks of Docker or its endpoints.
func TestStatusOnCluster(t *testing.T) {
	w, _ := newWindow(t)
	place := "cluster lab · namespace sandboxes"
	base := statusInfo()
	base.Docker, base.Runtime = nil, ""
	for _, tc := range []struct {
		name     string
		cluster  ClusterInfo
		headline string
		text     string
	}{
		{"connecting", ClusterInfo{Place: place}, "Connecting to the Kubernetes cluster… · " + place, "connecting…"},
		{"answers", ClusterInfo{Place: place, Answered: true, Context: "lab-admin", RuntimeClass: "gvisor"}, "Running · " + place + " · 2 sandboxes", "gvisor"},
		{"does not answer", ClusterInfo{Place: place, Answered: true, Err: "context lab-admin (https://10.0.0.1:6443) does not answer"},
			"Kubernetes cluster not reachable: sandboxes cannot start until it answers · " + place, "does not answer: context lab-admin"},
	} {
		info := base
		info.Cluster = &tc.cluster
		w.Status.Set(info)
		if h := w.Status.Headline(); h != tc.headline {
			t.Errorf("%s: headline %q, want %q", tc.name, h, tc.headline)
		}
		text := statusText(w)
		if !strings.Contains(text, place) || !strings.Contains(text, tc.text) {
			t.Errorf("%s: the tab does not show %q and %q:\n%s", tc.name, place, tc.text, text)
		}
		if strings.Contains(text, "Docker") || strings.Contains(text, "Endpoint") {
			t.Errorf("%s: the tab speaks of Docker on Kubernetes:\n%s", tc.name, text)
		}
	}
}

// On Kubernetes the Sandboxes tab's summary says which cluster and
// namespace it lists; on Docker it says nothing more.
func TestSandboxesPlace(t *testing.T) {
	w, _ := newWindow(t)
	w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: []sandboxwatch.Row{{Info: inventory.Info{ID: "a1", ContainerID: "c1", State: "running"}}}})
	if s := w.Sandboxes.Summary(); strings.HasPrefix(s, "On ") {
		t.Errorf("on Docker: %q", s)
	}
	w.Sandboxes.SetPlace("cluster lab · namespace sandboxes")
	if s := w.Sandboxes.Summary(); !strings.HasPrefix(s, "On cluster lab · namespace sandboxes: 1 sandbox") {
		t.Errorf("on the cluster: %q", s)
	}
	w.Sandboxes.Set(sandboxwatch.Snapshot{Err: errors.New("context lab does not answer")})
	if s := w.Sandboxes.Summary(); !strings.HasPrefix(s, "On cluster lab · namespace sandboxes: How many sandboxes run is not known") {
		t.Errorf("the cluster not answering: %q", s)
	}
}
