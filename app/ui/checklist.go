package ui

import (
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/health"
)

// The marks of a checklist line.
const (
	markOK      = "✓"
	markFail    = "✗"
	markPending = "…"
)

// checkLine is one line of the first-run checklist. choose names the
// language whose image a local one can replace (its one-click fix).
type checkLine struct{ mark, text, choose string }

// checklistCard is "Getting started", the first card of the Status tab:
// Docker, each language, a client, the Test, each with a mark and, when
// not done, where the fix is. The diagnostics follow it.
func (t *StatusTab) checklistCard(info StatusInfo) fyne.CanvasObject {
	var clients []ClientRow
	var servers []ServerRow
	if c := t.w.Clients; c != nil { // nil while the window is being made
		clients, servers = c.Rows(), c.Servers()
	}
	lines := checklist(info, clients, servers, t.tested)
	box := container.NewVBox()
	for _, l := range lines {
		box.Add(prose(l.mark + " " + l.text))
		if l.choose != "" && t.act.Images != nil && t.act.Use != nil {
			lang := l.choose
			box.Add(container.NewHBox(widget.NewButton("Choose a local image…", func() { t.chooseImage(lang) })))
		}
	}
	if t.chosen != "" {
		box.Add(prose(t.chosen))
	}
	return widget.NewCard("Getting started", "", box)
}

// checklist is the first-run checklist for info, the clients configured
// and the servers running, and the Test's outcome ("" before it ran, "ok",
// "failed").
func checklist(info StatusInfo, clients []ClientRow, servers []ServerRow, tested string) []checkLine {
	lines := []checkLine{dockerLine(info)}
	lines = append(lines, languageLines(info)...)
	lines = append(lines, clientLine(clients, servers))
	switch tested {
	case "ok":
		lines = append(lines, checkLine{mark: markOK, text: "Test ran " + bundled.TestCode + " through the bundled server"})
	case "failed":
		lines = append(lines, checkLine{mark: markFail, text: "Test failed: its answer is beside the Test button below"})
	default:
		lines = append(lines, checkLine{mark: markPending, text: "Test not run yet: press Test under Bundled server below"})
	}
	return lines
}

func dockerLine(info StatusInfo) checkLine {
	switch c := chosen(info); {
	case info.Lost != "":
		return checkLine{mark: markFail, text: "Docker stopped answering: see What to do below"}
	case c != nil:
		return checkLine{mark: markOK, text: "Docker: " + c.Product() + " answers"}
	case info.Docker == nil:
		return checkLine{mark: markPending, text: "Docker: looking for an engine"}
	}
	return checkLine{mark: markFail, text: "Docker: no engine answers; see What to do below"}
}

// languageLines is a line per configured language: it runs, or what
// stops it (its card below has the fix).
func languageLines(info StatusInfo) []checkLine {
	h := info.Health
	if chosen(info) == nil || info.Lost != "" {
		return nil
	}
	if h == nil {
		return []checkLine{{mark: markPending, text: "Languages: checking their images"}}
	}
	var lines []checkLine
	for _, p := range h.Problems {
		if p.Blocking && p.Language == "" { // a limit that stops every language
			lines = append(lines, checkLine{mark: markFail, text: problemTitle(p) + " (fix below)"})
		}
	}
	seen := map[string]bool{}
	for _, im := range h.Images {
		seen[im.Language] = true
		if im.InterpreterUnchecked {
			lines = append(lines, checkLine{mark: markPending, text: im.Language + ": its image was not checked in time (see below)"})
			continue
		}
		if im.Runnable {
			lines = append(lines, checkLine{mark: markOK, text: im.Language + " runs (" + im.Image + ")"})
			continue
		}
		l := checkLine{mark: markFail, text: im.Language + " cannot run (fix below)"}
		for _, p := range h.Problems {
			if p.Blocking && p.Language == im.Language {
				l.text = problemTitle(p) + " (fix below)"
				if p.Kind == health.ImageMissing || p.Kind == health.InterpreterGone {
					l.choose = im.Language // another image fixes it
				}
				break
			}
		}
		lines = append(lines, l)
	}
	for _, p := range h.Problems { // a language the images did not list
		if p.Blocking && p.Language != "" && !seen[p.Language] {
			seen[p.Language] = true
			lines = append(lines, checkLine{mark: markFail, text: problemTitle(p) + " (fix below)"})
		}
	}
	return lines
}

// connected returns the names of the clients the servers serve, in order,
// each once, without the window's own test client.
func connected(servers []ServerRow) []string {
	var on []string
	for _, s := range servers {
		for _, c := range s.Clients {
			if c != bundled.TestClientName && !slices.Contains(on, c) {
				on = append(on, c)
			}
		}
	}
	return on
}

// clientLine says whether an AI client is connected (a server serves it
// now), only configured, or neither.
func clientLine(clients []ClientRow, servers []ServerRow) checkLine {
	on := connected(servers)
	var set []string
	for _, c := range clients {
		if c.Configured {
			set = append(set, c.Display)
		}
	}
	switch {
	case len(on) > 0:
		return checkLine{mark: markOK, text: strings.Join(on, ", ") + " connected"}
	case len(set) > 0:
		return checkLine{mark: markPending, text: strings.Join(set, ", ") + " configured: it connects when you start it (or restart it)"}
	}
	return checkLine{mark: markFail, text: "No AI client configured: choose Configure under Clients"}
}
