package ui

import (
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"
)

// ClusterInfo is the Kubernetes cluster the sandboxes run on, when
// backend.kind is "kubernetes": Docker is then not looked for, and the
// Status tab shows the cluster where it shows Docker's engine.
type ClusterInfo struct {
	// Place is "cluster NAME · namespace NS".
	Place string
	// Context is the config's kubernetes.context; "" is the kubeconfig's
	// current one.
	Context string
	// RuntimeClass is the config's kubernetes.runtime_class; "" is the
	// cluster's default.
	RuntimeClass string
	// Answered is set once a look reached the cluster.
	Answered bool
	// Err says why the cluster does not answer ("" while it does).
	Err string
}

// clusterHeadline is the headline on Kubernetes.
func clusterHeadline(info StatusInfo) string {
	c := info.Cluster
	var parts []string
	switch {
	case c.Err != "":
		return "Kubernetes cluster not reachable: sandboxes cannot start until it answers · " + c.Place
	case !c.Answered:
		return "Connecting to the Kubernetes cluster… · " + c.Place
	case info.Paused:
		parts = append(parts, "Paused: servers refuse new sandboxes")
	default:
		parts = append(parts, "Running")
	}
	parts = append(parts, c.Place, info.Count().String())
	return strings.Join(parts, " · ")
}

// clusterCards are the Status tab's cards on Kubernetes, in place of
// Docker's and its endpoints': where the sandboxes run, and what to do
// when the cluster does not answer.
func clusterCards(c *ClusterInfo, detect *widget.Button) []fyne.CanvasObject {
	var items []*widget.FormItem
	add := func(k, v string) { items = append(items, widget.NewFormItem(k, wrapped(v))) }
	add("Where", c.Place)
	add("Context", orDefault(c.Context, "the kubeconfig's current context"))
	add("Runtime class", orDefault(c.RuntimeClass, "the cluster's default"))
	switch {
	case c.Err != "":
		add("State", "does not answer: "+c.Err)
	case c.Answered:
		add("State", "answers; its sandboxes are listed every few seconds")
	default:
		add("State", "connecting…")
	}
	cards := []fyne.CanvasObject{widget.NewCard("Kubernetes", "", container.NewVBox(widget.NewForm(items...), container.NewHBox(detect)))}
	if c.Err != "" {
		cards = append([]fyne.CanvasObject{widget.NewCard("What to do", "", wrapped(
			"Check that the cluster answers for the configured context (kubectl get pods -n NAMESPACE), or change [kubernetes] in the config; "+
				"`mcp-sandbox doctor` checks the context, the RBAC verbs and the runtime class. MCP Sandbox looks again by itself."))}, cards...)
	}
	return cards
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// SetPlace says where the sandboxes run, shown before the Sandboxes tab's
// summary: "cluster X · namespace Y" on Kubernetes, "" on Docker (whose
// engine the Status tab names).
func (t *SandboxesTab) SetPlace(place string) {
	if t.place == place {
		return
	}
	t.place = place
	t.redraw()
}

// Summary is the line above the Sandboxes table, as it is shown.
func (t *SandboxesTab) Summary() string { return t.summary.Text }
