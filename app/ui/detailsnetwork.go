package ui

import (
	"fmt"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// hostShown caps a host name in the details view: a refused host was
// named by the sandbox (up to 253 characters and a port), and the view
// shows its start and its end, so eight such names cannot push the rest
// of the view out of the window.
const hostShown = 64

// networkHeight caps the height of the details view's network part: its
// lines scroll beyond it, so the transcript keeps its room at 800×560
// whatever the sandbox made its server record.
const networkHeight = 100

// showNetwork says what a sandbox with a network may reach and what it
// did: for an allowlist sandbox its entries, the hosts refused most
// recently with how often, and the bytes each way (its record's counters,
// written by its server about once a second while traffic flows). The
// part hides for a sandbox without a network (the header says "none").
func (d *Details) showNetwork(r sandboxwatch.Row) {
	if r.Network != "allowlist" && r.Network != "egress" {
		d.network.Hide()
		return
	}
	d.netText.SetText(strings.Join(networkLines(r), "\n"))
	d.network.Show()
}

// newNetworkPart makes the network part: one wrapped label (host names
// are cut to hostShown, so word wrapping suffices) in a scroll at most
// networkHeight high.
func (d *Details) newNetworkPart() {
	d.netText = wrapped("")
	d.network = container.New(&cappedHeight{content: d.netText, max: networkHeight}, container.NewVScroll(d.netText))
	d.network.Hide()
}

// cappedHeight lays its one object out at the height content needs, but
// at most max.
type cappedHeight struct {
	content fyne.CanvasObject
	max     float32
}

func (c *cappedHeight) MinSize([]fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(0, min(c.content.MinSize().Height, c.max))
}

func (c *cappedHeight) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Resize(size)
	objs[0].Move(fyne.Position{})
}

// networkLines are the lines showNetwork shows.
func networkLines(r sandboxwatch.Row) []string {
	switch {
	case r.Network == "egress":
		return []string{"Network egress: a real network (network.allow_egress is on); its traffic is not counted here."}
	case !r.Traffic.Known:
		return []string{"Network allowlist: no connection yet."}
	}
	t := r.Traffic
	allowed := "Network allowlist · allowed: " + strings.Join(shortHosts(t.Entries()), ", ")
	if t.AllowedTotal == 0 {
		allowed = "Network allowlist · allowed: nothing without asking the person."
	} else if more := t.AllowedTotal - len(t.Entries()); more > 0 {
		allowed += fmt.Sprintf(" and %d more", more)
	}
	lines := []string{allowed}
	if hs := t.RefusedHosts(); len(hs) > 0 {
		refused := make([]string, len(hs))
		for i, h := range hs {
			refused[i] = shortHost(h.Host) + " ×" + strconv.Itoa(h.Count)
		}
		lines = append(lines, "Refused, most recent first: "+strings.Join(refused, ", "))
	}
	lines = append(lines, fmt.Sprintf("%s in, %s out · connections: %d allowed, %d refused, %d open now",
		sandboxwatch.Bytes(uint64(max(t.BytesIn, 0))), sandboxwatch.Bytes(uint64(max(t.BytesOut, 0))),
		t.AllowedConns, t.RefusedConns, t.Open))
	return lines
}

func shortHosts(hs []string) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = shortHost(h)
	}
	return out
}

// shortHost is h cleaned and, past hostShown characters, its start and
// its end (the port stays in sight) around an ellipsis.
func shortHost(h string) string {
	h = cleanText(strings.ReplaceAll(h, "\n", ""), state.MaxRecordHost*4)
	if utf8.RuneCountInString(h) <= hostShown {
		return h
	}
	rs := []rune(h)
	return string(rs[:hostShown-17]) + "…" + string(rs[len(rs)-16:])
}
