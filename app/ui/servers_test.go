package ui

import (
	"strings"
	"testing"
	"time"
)

// TestClientsTabListsServers: the Clients tab lists the servers running
// now, one a line, by the names people know, with pid, since when,
// transport and sandboxes; a client's own name shows no control
// characters; with none, it says so.
func TestClientsTabListsServers(t *testing.T) {
	w, _ := newWindow(t)
	w.SelectTab(TabClients)
	if got := w.Clients.ServersText(); !strings.Contains(got, "No MCP Sandbox server runs now") {
		t.Errorf("with no server: %q", got)
	}
	w.Clients.SetServers([]ServerRow{
		{Clients: []string{"Claude Desktop"}, PID: 4242, Since: now.Add(-12 * time.Minute), Transport: "stdio", Sandboxes: 2},
		{Clients: []string{"evil\x1b[2J\u202ename"}, PID: 77, Since: now.Add(-time.Minute), Transport: "http", Sandboxes: 1},
		{PID: 78, Since: now, Transport: "stdio"},
	})
	got := w.Clients.ServersText()
	for _, want := range []string{
		"Claude Desktop · pid 4242 · since 11:48 (12m) · stdio · 2 sandboxes",
		"pid 77 · since 11:59 (1m) · http · 1 sandbox",
		"a client that has not introduced itself yet · pid 78",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("servers list lacks %q:\n%s", want, got)
		}
	}
	if strings.ContainsAny(got, "\x1b\u202e") {
		t.Errorf("a client's name shows control characters: %q", got)
	}
	golden(t, w, "clients-servers")
}
