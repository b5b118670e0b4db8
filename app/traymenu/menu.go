package traymenu

import (
	"fmt"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/assets"
)

// Labels of the fixed items (the D-Bus tests click them by label).
const (
	LabelStart        = "Start"
	LabelPause        = "Pause"
	LabelOpen         = "Open MCP Sandbox"
	LabelClients      = "Clients"
	LabelStopAll      = "Stop all sandboxes"
	LabelCheckUpdates = "Check for updates"
	LabelMove         = "Move to Applications…"
	LabelQuit         = "Quit"
)

// PausedWord is the one word the menu and the window use for the paused
// service.
const PausedWord = "Paused"

// InstallLabel is the item offering a newer release.
func InstallLabel(version string) string { return "Install MCP Sandbox " + version + "…" }

// State is what the menu reflects.
type State struct {
	// Engine names the Docker engine in use ("Colima"); empty while
	// detecting. DockerOK is false when no engine answers.
	Engine   string
	DockerOK bool
	// Cluster is set when sandboxes run on Kubernetes (backend.kind =
	// "kubernetes"): Engine is then "cluster X · namespace Y", DockerOK
	// says whether the cluster answers, and nothing speaks of Docker.
	Cluster bool
	// Detecting is set until the first detection ends.
	Detecting bool
	// Sandboxes counts the managed sandboxes and Warm the unclaimed
	// warm-pool containers, by sandboxwatch.Count's rule.
	Sandboxes int
	Warm      int
	// Paused is set while the service is paused.
	Paused bool
	// HTTP is set when the tray's HTTP server is configured: Pause
	// names it only then.
	HTTP    bool
	Clients []Client
	// Failed counts the calls that failed (errors, timeouts, OOM kills)
	// since the person last looked: the icon shows a badge while it is
	// not 0.
	Failed int
	// Offer is the newer release's version, "" when none is offered.
	Offer string
	// MoveOffered is set when the app runs from a place that vanishes (a
	// macOS disk image or App Translocation copy) and can move itself to
	// Applications.
	MoveOffered bool
	// Questions are the servers' questions waiting for the person.
	Questions []Question
	// Proposals counts the changes to the person's files waiting for
	// review (propose_changes); the window shows them.
	Proposals int
	// Attention says what keeps code from running ("code in bash cannot
	// run", health.Engine.Attention: the window's headline says the
	// same), "" when nothing does.
	Attention string
}

// Client is one entry of the Clients submenu.
type Client struct {
	Name, Display string
	Installed     bool
	Configured    bool
}

// Actions are what the items do; each must not block.
type Actions struct {
	Start, Pause, Open, StopAll, Quit, CheckUpdates, Install, Move func()
	// Configure configures (or repairs) the named client.
	Configure func(name string)
	// Answer answers question id with a Choice.
	Answer func(id, choice string)
	// Review opens the window on the changes waiting for review.
	Review func()
}

// Item is one menu entry.
type Item struct {
	Label     string
	Separator bool
	Disabled  bool
	Checked   bool
	// Checkable items show a check box (Checked says its state).
	Checkable bool
	Hidden    bool
	Children  []Item
	Action    func()
}

// StatusLine is the menu's first line.
func StatusLine(s State) string {
	var docker string
	switch {
	case s.Cluster && s.Detecting:
		docker = "Kubernetes: connecting…"
	case s.Cluster && !s.DockerOK:
		return "Kubernetes: " + s.Engine + " not reachable"
	case s.Cluster:
		docker = "Kubernetes: " + s.Engine
	case s.Detecting:
		return "Docker: looking…"
	case !s.DockerOK:
		return "Docker: not reachable"
	default:
		docker = "Docker: " + s.Engine
	}
	line := fmt.Sprintf("%s · %s", docker, s.Count())
	if s.Paused {
		line += " · " + PausedWord
	}
	return line
}

// PauseNote says, in the Pause submenu, what pausing means beyond the
// sandboxes it stops.
const PauseNote = "Servers refuse new sandboxes until you choose Start"

// PauseConfirmLabel is the Pause submenu's action: what it stops, by the
// one count, and the HTTP server only when there is one.
func PauseConfirmLabel(s State) string {
	http := ""
	if s.HTTP {
		http = " and the HTTP server"
	}
	switch {
	case !s.counted() && http != "":
		return "Stop the HTTP server and pause"
	case !s.counted():
		// Nothing is said of sandboxes nobody can count now.
		return "Pause now"
	case s.Sandboxes == 0 && http != "":
		return "Stop the HTTP server and pause"
	case s.Sandboxes == 0:
		return "Pause now (no sandbox runs)"
	}
	if http != "" {
		return "Stop " + Plural(s.Sandboxes) + http + ", then pause"
	}
	return "Stop " + Plural(s.Sandboxes) + " and pause"
}

// counted says the sandbox count is known: the engine answers.
func (s State) counted() bool { return s.DockerOK && !s.Detecting }

// StopAllNote says, in the Stop all submenu, what stopping costs.
const StopAllNote = "Their files in /workspace are gone for good"

// StopAllConfirmLabel is the Stop all submenu's action, by the one count.
func StopAllConfirmLabel(s State) string { return "Stop " + Plural(s.Sandboxes) }

// AttentionLabel is the item, shown only while something keeps code
// from running, that opens the window with the fix.
func AttentionLabel(s State) string {
	return "Needs attention: " + s.Attention + " — open for the fix"
}

// Title is the tray item's title and tooltip: the product and its state,
// and the questions waiting for the person.
func Title(s State) string {
	t := stateTitle(s)
	switch n := len(s.Questions); {
	case n == 1:
		t += " · 1 question waiting"
	case n > 1:
		t += fmt.Sprintf(" · %d questions waiting", n)
	}
	if s.Proposals > 0 {
		t += " · " + LabelProposals(s.Proposals)
	}
	return t
}

func stateTitle(s State) string {
	switch {
	case s.Cluster && s.Detecting:
		return "MCP Sandbox — connecting to the Kubernetes cluster"
	case s.Cluster && !s.DockerOK:
		return "MCP Sandbox — Kubernetes cluster not reachable"
	case s.Detecting:
		return "MCP Sandbox — looking for Docker"
	case !s.DockerOK:
		return "MCP Sandbox — Docker not reachable"
	case s.Attention != "":
		return "MCP Sandbox — Needs attention: " + s.Attention
	case s.Paused:
		return "MCP Sandbox — " + PausedWord
	}
	return "MCP Sandbox — " + s.Count().String() + failedSuffix(s.Failed)
}

// Alert says whether the icon carries the badge: something failed, or
// something keeps code from running.
func Alert(s State) bool { return s.Failed > 0 || s.Attention != "" }

func failedSuffix(n int) string {
	switch {
	case n == 1:
		return " · 1 call failed"
	case n > 1:
		return fmt.Sprintf(" · %d calls failed", n)
	}
	return ""
}

// Count is the state's count, by the one rule (sandboxwatch.Count).
func (s State) Count() sandboxwatch.Count {
	return sandboxwatch.Count{Sandboxes: s.Sandboxes, Warm: s.Warm}
}

// Plural says "1 sandbox" or "N sandboxes" (sandboxwatch.Sandboxes).
func Plural(n int) string { return sandboxwatch.Sandboxes(n) }

// Icon is the tray icon's state, as assets names it.
func Icon(s State) string {
	switch {
	case !s.Detecting && !s.DockerOK:
		return assets.DockerMissing
	case s.Paused:
		return assets.Paused
	}
	return assets.Running
}

// Build returns the menu for s.
func Build(s State, a Actions) []Item {
	start := Item{Label: LabelStart, Action: a.Start, Hidden: !s.Paused}
	pause := Item{Label: LabelPause, Hidden: s.Paused, Children: []Item{
		{Label: PauseNote, Disabled: true},
		{Label: PauseConfirmLabel(s), Action: a.Pause},
	}}
	var clients []Item
	for _, c := range s.Clients {
		name := c.Name
		it := Item{Label: c.Display, Checkable: true, Checked: c.Configured, Action: func() {
			if a.Configure != nil {
				a.Configure(name)
			}
		}}
		if !c.Installed && !c.Configured {
			it.Label += " (not installed)"
			it.Disabled = true
		}
		clients = append(clients, it)
	}
	install := Item{Label: InstallLabel(s.Offer), Action: a.Install, Hidden: s.Offer == ""}
	return []Item{
		{Label: StatusLine(s), Disabled: true},
		{Label: AttentionLabel(s), Action: a.Open, Hidden: s.Attention == ""},
		{Separator: true},
		questionsItem(s, a),
		{Label: LabelProposals(s.Proposals), Action: a.Review, Hidden: s.Proposals == 0},
		start,
		pause,
		{Label: LabelOpen, Action: a.Open},
		{Label: LabelClients, Children: clients},
		{Label: LabelStopAll, Disabled: s.Sandboxes == 0 || !s.counted(), Children: []Item{
			{Label: StopAllNote, Disabled: true},
			{Label: StopAllConfirmLabel(s), Action: a.StopAll},
		}},
		{Label: LabelCheckUpdates, Action: a.CheckUpdates},
		install,
		{Label: LabelMove, Action: a.Move, Hidden: !s.MoveOffered},
		{Separator: true},
		{Label: LabelQuit, Action: a.Quit},
	}
}
