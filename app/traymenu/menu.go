// Package traymenu builds the tray's menu and chooses its icon from the
// tray's state, so both can be checked without a desktop:
//
//	Docker: Colima · 2 sandboxes
//	──────────
//	Stop                (Start while paused)
//	Open MCP Sandbox
//	Clients ▸           (✓ beside each configured client)
//	Stop all sandboxes
//	──────────
//	Quit
package traymenu

import (
	"fmt"

	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/app/icons"
)

// Labels of the fixed items (the D-Bus tests click them by label).
const (
	LabelStart   = "Start"
	LabelStop    = "Stop"
	LabelOpen    = "Open MCP Sandbox"
	LabelClients = "Clients"
	LabelStopAll = "Stop all sandboxes"
	LabelQuit    = "Quit"
)

// State is what the menu reflects.
type State struct {
	// Engine names the Docker engine in use ("Colima"); empty while
	// detecting. DockerOK is false when no engine answers.
	Engine   string
	DockerOK bool
	// Detecting is set until the first detection ends.
	Detecting bool
	// Sandboxes counts the managed sandboxes.
	Sandboxes int
	// Paused is set while the service is stopped from the tray.
	Paused  bool
	Clients []Client
}

// Client is one entry of the Clients submenu.
type Client struct {
	Name, Display string
	Installed     bool
	Configured    bool
}

// Actions are what the items do; each is called on the UI goroutine and
// must not block.
type Actions struct {
	Start, Stop, Open, StopAll, Quit func()
	// Configure configures (or repairs) the named client.
	Configure func(name string)
}

// StatusLine is the menu's first line.
func StatusLine(s State) string {
	var docker string
	switch {
	case s.Detecting:
		docker = "Docker: looking…"
	case !s.DockerOK:
		return "Docker: not found"
	default:
		docker = "Docker: " + s.Engine
	}
	line := fmt.Sprintf("%s · %s", docker, plural(s.Sandboxes))
	if s.Paused {
		line += " · stopped"
	}
	return line
}

func plural(n int) string {
	if n == 1 {
		return "1 sandbox"
	}
	return fmt.Sprintf("%d sandboxes", n)
}

// Icon is the tray icon's state.
func Icon(s State) icons.State {
	switch {
	case !s.Detecting && !s.DockerOK:
		return icons.DockerMissing
	case s.Paused:
		return icons.Paused
	}
	return icons.Running
}

// Build returns the menu for s.
func Build(s State, a Actions) *fyne.Menu {
	status := fyne.NewMenuItem(StatusLine(s), nil)
	status.Disabled = true
	toggle := fyne.NewMenuItem(LabelStop, a.Stop)
	if s.Paused {
		toggle = fyne.NewMenuItem(LabelStart, a.Start)
	}
	clients := fyne.NewMenu(LabelClients)
	for _, c := range s.Clients {
		name := c.Name
		it := fyne.NewMenuItem(c.Display, func() { a.Configure(name) })
		it.Checked = c.Configured
		if !c.Installed && !c.Configured {
			it.Label += " (not installed)"
			it.Disabled = true
		}
		clients.Items = append(clients.Items, it)
	}
	clientsItem := fyne.NewMenuItem(LabelClients, nil)
	clientsItem.ChildMenu = clients
	stopAll := fyne.NewMenuItem(LabelStopAll, a.StopAll)
	stopAll.Disabled = s.Sandboxes == 0
	quit := fyne.NewMenuItem(LabelQuit, a.Quit)
	quit.IsQuit = true
	return fyne.NewMenu("MCP Sandbox",
		status,
		fyne.NewMenuItemSeparator(),
		toggle,
		fyne.NewMenuItem(LabelOpen, a.Open),
		clientsItem,
		stopAll,
		fyne.NewMenuItemSeparator(),
		quit,
	)
}
