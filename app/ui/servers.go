package ui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
)

// ServerRow is one MCP Sandbox server running now, as the Clients tab
// lists it: what the server says of itself beside its lock
// (state.ServerInfo), and the sandboxes it owns.
type ServerRow struct {
	// Clients are the names of the clients it serves, as people know
	// them ("Claude Desktop"); empty before a client introduced itself.
	Clients   []string
	PID       int
	Since     time.Time
	Transport string // "stdio" or "http"
	Sandboxes int
}

// maxServersShown bounds the list (each server is a line).
const maxServersShown = 50

// SetServers shows the servers running now.
func (t *ClientsTab) SetServers(rows []ServerRow) {
	was := connected(t.servers)
	t.servers = rows
	t.serversLabel.SetText(t.serversText())
	t.content.Refresh() // the list may take more lines
	// Status's checklist says who is connected, and nothing else of the
	// servers: its body is built again only when that changes (servers
	// come and go and their counts change many times a second under churn;
	// each build leaves a minute of widgets in Fyne's renderer cache).
	if !slices.Equal(was, connected(rows)) {
		t.w.Status.rebuild()
	}
}

// Servers returns the servers listed.
func (t *ClientsTab) Servers() []ServerRow { return t.servers }

// ServersText returns the list as shown.
func (t *ClientsTab) ServersText() string { return t.serversLabel.Text }

func (t *ClientsTab) serversText() string {
	if len(t.servers) == 0 {
		return "No MCP Sandbox server runs now: a client starts one when it needs it."
	}
	now := t.w.o.Now()
	lines := make([]string, 0, len(t.servers))
	for i, s := range t.servers {
		if i == maxServersShown {
			lines = append(lines, fmt.Sprintf("… and %d more", len(t.servers)-i))
			break
		}
		who := "a client that has not introduced itself yet"
		if len(s.Clients) > 0 {
			names := make([]string, len(s.Clients))
			for j, c := range s.Clients {
				names[j] = cleanText(c, 80)
			}
			who = strings.Join(names, ", ")
		}
		lines = append(lines, fmt.Sprintf("%s · pid %d · since %s (%s) · %s · %s",
			who, s.PID, s.Since.Local().Format("15:04"), sandboxwatch.Duration(now.Sub(s.Since)), cleanText(s.Transport, 16), sandboxwatch.Sandboxes(s.Sandboxes)))
	}
	return strings.Join(lines, "\n")
}
