package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// One counting rule: the headline and the Sandboxes tab say the same
// "2 sandboxes · 1 warm" (sandboxwatch.Count), the table lists the two
// sandboxes and not the warm-pool container, and Stop all's question names
// the sandboxes it stops and the pool apart.
func TestWarmPoolCountedApart(t *testing.T) {
	w, _ := newWindow(t)
	snap := sandboxwatch.Snapshot{Rows: []sandboxwatch.Row{
		{Info: inventory.Info{ID: "sb-one", ContainerID: "c1", Language: "python", State: "running"}},
		{Info: inventory.Info{ID: "pool-1", ContainerID: "c2", Language: "python", State: "running", Pool: true}},
		{Info: inventory.Info{ID: "sb-two", ContainerID: "c3", Language: "bash", State: "running"}},
	}}
	c := snap.Count()
	info := statusInfo()
	info.Sandboxes, info.Warm = c.Sandboxes, c.Warm
	w.Status.Set(info)
	w.Sandboxes.Set(snap)
	const want = "2 sandboxes · 1 warm"
	if got := w.Status.Headline(); !strings.HasSuffix(got, want) {
		t.Errorf("headline %q, want it to end %q", got, want)
	}
	if got := w.Sandboxes.summary.Text; !strings.HasPrefix(got, want) {
		t.Errorf("Sandboxes tab summary %q, want it to start %q", got, want)
	}
	var ids []string
	for _, r := range w.Sandboxes.Snapshot().Rows {
		ids = append(ids, r.ID)
	}
	if strings.Join(ids, ",") != "sb-one,sb-two" {
		t.Errorf("table rows %v, want sb-one and sb-two (the warm one counted apart)", ids)
	}
	w.Sandboxes.confirmStopAll()
	var text string
	walk(w.Window().Canvas().Overlays().Top(), func(o any) {
		if l, ok := o.(*widget.Label); ok {
			text += l.Text + "\n"
		}
	})
	for _, s := range []string{"This removes 2 sandboxes", "warm pool (1 kept ready"} {
		if !strings.Contains(text, s) {
			t.Errorf("Stop all question %q lacks %q", text, s)
		}
	}
}

// The selected row's details line says the sandbox's state and its
// workspace limit, which the table's columns do not.
func TestSelectedRowShowsStateAndWorkspace(t *testing.T) {
	w, _ := newWindow(t)
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: []sandboxwatch.Row{{Info: inventory.Info{
		ID: "sb-one", ContainerID: "c1", Language: "python", State: "exited",
		Limits: inventory.Limits{MemoryMB: 512, WorkspaceMB: 256, ExecTimeoutSeconds: 60},
	}}}})
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 0, Col: 1})
	got := w.Sandboxes.details.Text
	for _, s := range []string{"sb-one · exited · python", "workspace 256 MB"} {
		if !strings.Contains(got, s) {
			t.Errorf("details %q lack %q", got, s)
		}
	}
}
