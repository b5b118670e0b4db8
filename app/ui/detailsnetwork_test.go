package ui

import (
	"strings"
	"testing"
	"unicode/utf8"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// longHost is a refused host as long as a DNS name may be (253
// characters), with its port.
var longHost = strings.Repeat("a", 63) + "." + strings.Repeat("b", 63) + "." + strings.Repeat("c", 63) + "." + strings.Repeat("d", 57) + ".io:443"

// hostileTraffic is an allowlist sandbox's record as a hostile sandbox
// could make it: a 253-character host, one with control characters and
// a bidi override (the Lister bounds a record, but the view must not
// rely on it), and more entries than are listed.
func hostileTraffic() inventory.Traffic {
	t := inventory.Traffic{Known: true, AllowedTotal: 40, AllowedConns: 12, RefusedConns: 9, BytesIn: 1300, BytesOut: 300, Open: 1}
	t.Allowed[0], t.Allowed[1], t.Allowed[2] = "pypi.org", "*.pythonhosted.org", "api.github.com:8443"
	t.Refused[0] = state.HostHits{Host: longHost, Count: 5}
	t.Refused[1] = state.HostHits{Host: "evil\x1b[2J\u202e.example\n:443", Count: 3}
	t.Refused[2] = state.HostHits{Host: "169.254.169.254:80", Count: 1}
	return t
}

// allowlistRows is sandboxRows with the first sandbox an allowlist one
// with hostile traffic.
func allowlistRows() sandboxwatch.Snapshot {
	snap := sandboxRows()
	snap.Rows[0].Network, snap.Rows[0].Traffic = "allowlist", hostileTraffic()
	return snap
}

// TestDetailsNetwork: the details view of an allowlist sandbox lists its
// entries, the hosts refused with counts and the bytes each way; a
// 253-character host is shown by its start and its end (the port in
// sight), control characters never reach a label, and the part fits at
// 800×560. A sandbox without a network has no such part.
func TestDetailsNetwork(t *testing.T) {
	w, _ := newWindow(t)
	w.Sandboxes.act.Details = (&detailsFakes{}).actions()
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(allowlistRows())
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	d.Window().Resize(fyne.NewSize(800, 560))
	goldenCanvas(t, d.Window().Canvas(), "details-network")

	if !d.network.Visible() {
		t.Fatal("no network part")
	}
	text := d.netText.Text
	for _, want := range []string{
		"Network allowlist · allowed: pypi.org, *.pythonhosted.org, api.github.com:8443 and 37 more",
		"evil[2J.example:443 ×3", "169.254.169.254:80 ×1", "…ddddddddd.io:443 ×5",
		"1.3 KB in, 300 B out · connections: 12 allowed, 9 refused, 1 open now",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("network part lacks %q:\n%s", want, text)
		}
	}
	if strings.ContainsAny(text, "\x1b\u202e") {
		t.Errorf("control characters shown: %q", text)
	}
	for _, line := range strings.Split(text, ", ") {
		if utf8.RuneCountInString(line) > hostShown+len("Refused, most recent first: ")+8 {
			t.Errorf("a host shown at full length: %q", line)
		}
	}
	checkNothingCut(t, "details-network", d.Window().Content())
	if h := d.network.Size().Height; h > networkHeight || h < 3*theme.TextSize() {
		t.Errorf("the network part is %v px high", h)
	}

	w.Sandboxes.Set(sandboxRows()) // the same sandbox, now without a network
	if d.network.Visible() {
		t.Error("the network part stays for a sandbox without a network")
	}
}

// TestSandboxesNetworkColumn: the Network column says each sandbox's mode
// in a few words and an allowlist sandbox's bytes each way; a row with
// hostile refused hosts does not widen the table (the hosts are for the
// details view), and sorting by the column puts the most refused first.
func TestSandboxesNetworkColumn(t *testing.T) {
	w, _ := newWindow(t)
	w.Show()
	w.Window().Resize(fyne.NewSize(800, 560))
	w.SelectTab(TabSandboxes)
	snap := allowlistRows()
	quiet := snap.Rows[0]
	quiet.ID, quiet.ContainerID, quiet.Traffic = "q1u2i3e4t5aa", "cq", inventory.Traffic{Known: true, AllowedTotal: 1}
	snap.Rows = append(snap.Rows, quiet)
	w.Sandboxes.Set(snap)
	golden(t, w, "sandboxes-network")

	col := -1
	for i, c := range sandboxColumns {
		if c.title == "Network" {
			col = i
		}
	}
	if col < 0 {
		t.Fatal("no Network column")
	}
	w.Sandboxes.SortBy(col)
	want := map[string]string{
		"k3j5q2m7x4ab": "allowlist · 40 hosts · 9 refused ↓ 1.3 KB ↑ 300 B · 1 open",
		"q1u2i3e4t5aa": "allowlist · 1 host ↓ 0 B ↑ 0 B",
		"p9d2r8w3n6cd": "none",
	}
	for row, id := range w.Sandboxes.Shown() {
		// Lines wrap at spaces: the cell read as one line.
		if got := strings.ReplaceAll(w.Sandboxes.grid.Cell(row, col), "\n", " "); got != want[id] {
			t.Errorf("%s: Network cell %q, want %q", id, got, want[id])
		}
	}
	if got := strings.Join(w.Sandboxes.Shown(), " "); got != "k3j5q2m7x4ab q1u2i3e4t5aa p9d2r8w3n6cd" {
		t.Errorf("sorted by network: %s", got)
	}
}
