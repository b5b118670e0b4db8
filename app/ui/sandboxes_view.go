package ui

import (
	"cmp"
	"slices"
	"strings"

	"fyne.io/fyne/v2"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
)

// The Sandboxes tab shows the rows of one client or all, in the order of
// the column last clicked. Both choices are kept across snapshots: rows
// are found again by their key (the sandbox id), never by their number.

// allClients is the client filter's first choice, which shows every row.
const allClients = "All clients"

// unnamedClient stands for a sandbox whose server's client gave no name.
const unnamedClient = "Unnamed client"

// clientsWidth is the client filter's width; a longer name is cut there
// (the table shows it whole).
const clientsWidth = 190

// clientName is the name the filter knows r's client by: the name people
// know (clientconfig.DisplayForMCPName, as the table shows it).
func clientName(r sandboxwatch.Row) string {
	if r.Client == "" {
		return unnamedClient
	}
	return r.ClientLabel()
}

// view computes the rows shown from the snapshot: the chosen client's, in
// the chosen order (ties: oldest first, then by id, so the order never
// flickers between snapshots; unsorted: the engine's, oldest first), and
// the filter's choices.
func (t *SandboxesTab) view() {
	rows := make([]sandboxwatch.Row, 0, len(t.snap.Rows))
	names := []string{}
	for _, r := range t.snap.Rows {
		name := clientName(r)
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		if t.client == "" || name == t.client {
			rows = append(rows, r)
		}
	}
	if t.sortCol >= 0 {
		order := sandboxColumns[t.sortCol].order
		slices.SortStableFunc(rows, func(a, b sandboxwatch.Row) int {
			c := order(a, b)
			if t.sortDesc {
				c = -c
			}
			return cmp.Or(c, byAge(a, b))
		})
	}
	t.shown = rows

	slices.Sort(names)
	if t.client != "" && !slices.Contains(names, t.client) {
		names = append(names, t.client) // kept while chosen, even with none left
	}
	opts := append([]string{allClients}, names...)
	if !slices.Equal(opts, t.clients.Options) {
		t.clients.Options = opts
		t.clients.Refresh()
	}
}

// SetClient shows only the sandboxes client started (a display name, as
// the filter lists them); allClients or "" shows all.
func (t *SandboxesTab) SetClient(client string) {
	if client == allClients {
		client = ""
	}
	if client == t.client {
		return
	}
	t.client = client
	if t.clients.Selected != cmp.Or(client, allClients) {
		t.clients.SetSelected(cmp.Or(client, allClients)) // calls back, then returns above
	}
	t.redraw()
}

// SortBy orders the rows by column col (a click on its header); the
// column sorted by already is reversed. A column without an order is
// ignored.
func (t *SandboxesTab) SortBy(col int) {
	if col < 0 || col >= len(sandboxColumns) || sandboxColumns[col].order == nil {
		return
	}
	if t.sortCol == col {
		t.sortDesc = !t.sortDesc
	} else {
		t.sortCol, t.sortDesc = col, false
	}
	t.view()
	t.grid.Refresh()
}

// SortedBy names the column sorted by ("" for none) and whether it is
// reversed.
func (t *SandboxesTab) SortedBy() (string, bool) {
	if t.sortCol < 0 {
		return "", false
	}
	return sandboxColumns[t.sortCol].title, t.sortDesc
}

// headerText is a column's header, marked ▲ or ▼ when sorted by.
func (t *SandboxesTab) headerText(col int) string {
	title := sandboxColumns[col].title
	switch {
	case col != t.sortCol:
		return title
	case t.sortDesc:
		return title + " ▼"
	}
	return title + " ▲"
}

// Shown returns the ids of the rows shown, in order.
func (t *SandboxesTab) Shown() []string {
	ids := make([]string, len(t.shown))
	for i, r := range t.shown {
		ids[i] = r.ID
	}
	return ids
}

// ClientChoices returns what the client filter offers.
func (t *SandboxesTab) ClientChoices() []string { return slices.Clone(t.clients.Options) }

// The orders of the sortable columns.

// byClient groups the rows by client, by the name people know.
func byClient(a, b sandboxwatch.Row) int { return strings.Compare(clientName(a), clientName(b)) }

func byState(a, b sandboxwatch.Row) int { return strings.Compare(a.StateLabel(), b.StateLabel()) }

func byImage(a, b sandboxwatch.Row) int { return strings.Compare(a.Image, b.Image) }

// byUsage is by memory used (a row not sampled yet first), then CPU.
func byUsage(a, b sandboxwatch.Row) int {
	mem := func(r sandboxwatch.Row) int64 {
		if r.Sampled.IsZero() {
			return -1
		}
		return int64(r.Usage.MemoryBytes)
	}
	return cmp.Or(cmp.Compare(mem(a), mem(b)), cmp.Compare(a.Usage.CPUPercent, b.Usage.CPUPercent))
}

// byNetwork is by mode, then the most refused connections first, then
// the most bytes in.
func byNetwork(a, b sandboxwatch.Row) int {
	return cmp.Or(strings.Compare(a.NetworkLabel(), b.NetworkLabel()),
		cmp.Compare(b.Traffic.RefusedConns, a.Traffic.RefusedConns), cmp.Compare(b.Traffic.BytesIn, a.Traffic.BytesIn))
}

// byAge is oldest first, then by id.
func byAge(a, b sandboxwatch.Row) int {
	return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), strings.Compare(a.ID, b.ID))
}

// fixedWidth lays its one object out at width, at its own height.
type fixedWidth struct{ width float32 }

func (f *fixedWidth) MinSize(objs []fyne.CanvasObject) fyne.Size {
	return fyne.NewSize(f.width, objs[0].MinSize().Height)
}

func (f *fixedWidth) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	objs[0].Resize(size)
	objs[0].Move(fyne.Position{})
}
