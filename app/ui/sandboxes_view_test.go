package ui

import (
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
)

// viewRows are sandboxRows and two more: an older claude-ai sandbox whose
// container exited, one from a client that gave no name, and a warm one.
func viewRows() sandboxwatch.Snapshot {
	s := sandboxRows()
	exited := s.Rows[0]
	exited.ID, exited.ContainerID, exited.State = "a7exitedbox1", "ca7", "exited"
	exited.CreatedAt = now.Add(-2 * time.Hour)
	exited.Usage.MemoryBytes = 5 << 20
	unnamed := s.Rows[1]
	unnamed.ID, unnamed.ContainerID, unnamed.Client = "z1unnamed001", "cz1", ""
	unnamed.Usage.MemoryBytes = 200 << 20
	warm := sandboxwatch.Row{Info: inventory.Info{ID: "w1warm000001", ContainerID: "cw1", State: "running", Pool: true}}
	s.Rows = append([]sandboxwatch.Row{exited}, append(s.Rows, unnamed, warm)...)
	return s
}

// header is the Sandboxes table's header of the column titled title, as
// drawn.
func header(t *testing.T, w *Window, title string) *headerLabel {
	t.Helper()
	var found *headerLabel
	walk(w.Sandboxes.grid.table, func(o any) {
		if h, ok := o.(*headerLabel); ok && strings.TrimRight(strings.TrimSuffix(strings.TrimSuffix(h.Text, "▲"), "▼"), " ") == title {
			found = h
		}
	})
	if found == nil {
		t.Fatalf("no header %q drawn", title)
	}
	return found
}

// highlighted is the first line of each text cell drawn as selected.
func highlighted(w *Window) []string {
	var out []string
	walk(w.Sandboxes.grid.table, func(o any) {
		c, ok := o.(*fyne.Container)
		if !ok || len(c.Objects) != 3 {
			return
		}
		bg, ok1 := c.Objects[0].(*canvas.Rectangle)
		l, ok2 := c.Objects[1].(*widget.Label)
		if ok1 && ok2 && bg.Visible() && l.Visible() {
			out = append(out, strings.SplitN(l.Text, "\n", 2)[0])
		}
	})
	return out
}

// checkSelectedRow checks that the text cells drawn selected are one
// whole row, id's.
func checkSelectedRow(t *testing.T, w *Window, id string) {
	t.Helper()
	got := highlighted(w)
	if len(got) != len(sandboxColumns)-1 || !slices.Contains(got, id) {
		t.Errorf("cells drawn selected: %q, want the %d text cells of %s", got, len(sandboxColumns)-1, id)
	}
}

// TestSandboxesStateSortSelectFilter: the table says each sandbox's
// state; a click on a header sorts by it (again: reversed) and the order
// holds across new snapshots; a click selects the whole row, which stays
// selected (by id) when rows move, and enables Stop and Details; the
// client filter offers the clients by name and shows one client's rows.
func TestSandboxesStateSortSelectFilter(t *testing.T) {
	w, f := newWindow(t)
	w.Show()
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(viewRows())
	tab := w.Sandboxes
	if got := strings.Join(tab.Shown(), ","); got != "a7exitedbox1,k3j5q2m7x4ab,p9d2r8w3n6cd,z1unnamed001" {
		t.Fatalf("rows %s: want the engine's order, the warm one counted apart", got)
	}
	if got := tab.Cell(0, "State"); got != "exited" {
		t.Errorf("state of the exited sandbox = %q", got)
	}
	if !strings.HasPrefix(tab.summary.Text, "4 sandboxes · 1 warm") {
		t.Errorf("summary %q", tab.summary.Text)
	}

	sorts := []struct {
		title, want, mark string
	}{
		{"Sandbox", "a7exitedbox1,k3j5q2m7x4ab,p9d2r8w3n6cd,z1unnamed001", "▲"}, // Claude Desktop ×2, Cursor, Unnamed client
		{"Sandbox", "z1unnamed001,p9d2r8w3n6cd,a7exitedbox1,k3j5q2m7x4ab", "▼"}, // reversed; a client's rows still oldest first
		{"Usage / limit", "a7exitedbox1,k3j5q2m7x4ab,p9d2r8w3n6cd,z1unnamed001", "▲"},
		{"State", "a7exitedbox1,k3j5q2m7x4ab,p9d2r8w3n6cd,z1unnamed001", "▲"},
		{"Time", "a7exitedbox1,k3j5q2m7x4ab,p9d2r8w3n6cd,z1unnamed001", "▲"},
		{"Time", "z1unnamed001,p9d2r8w3n6cd,k3j5q2m7x4ab,a7exitedbox1", "▼"},
	}
	for _, s := range sorts {
		test.Tap(header(t, w, s.title))
		if got := strings.Join(tab.Shown(), ","); got != s.want {
			t.Errorf("sorted by %s %s: %s, want %s", s.title, s.mark, got, s.want)
		}
		if got := header(t, w, s.title).Text; got != s.title+" "+s.mark {
			t.Errorf("header %q, want %q", got, s.title+" "+s.mark)
		}
	}
	test.Tap(header(t, w, "")) // the Stop column has no order
	if col, desc := tab.SortedBy(); col != "Time" || !desc {
		t.Errorf("a click on the Stop column's header changed the order to %q %v", col, desc)
	}

	// Select a row: the whole row is marked, Stop and Details act on it.
	if !tab.stopSel.Disabled() || !tab.openBtn.Disabled() {
		t.Error("Stop sandbox or Details… enabled with no row selected")
	}
	tab.grid.table.Select(widget.TableCellID{Row: 1, Col: 4}) // p9d2 under Time ▼
	if tab.selected != "p9d2r8w3n6cd" || tab.stopSel.Disabled() || tab.openBtn.Disabled() {
		t.Fatalf("selected %q; Stop disabled %v, Details disabled %v", tab.selected, tab.stopSel.Disabled(), tab.openBtn.Disabled())
	}
	w.Window().Canvas().Capture()
	checkSelectedRow(t, w, "p9d2r8w3n6cd")
	// A new snapshot (usage moved, a sandbox gone) keeps the order and
	// the selection, by id.
	next := viewRows()
	next.Rows = slices.Delete(next.Rows, 3, 4) // z1unnamed001 went
	next.Rows[2].Usage.MemoryBytes = 1 << 30
	tab.Set(next)
	if got := strings.Join(tab.Shown(), ","); got != "p9d2r8w3n6cd,k3j5q2m7x4ab,a7exitedbox1" {
		t.Errorf("after a new snapshot: %s", got)
	}
	goldenCanvas(t, w.Window().Canvas(), "sandboxes-sorted")
	checkSelectedRow(t, w, "p9d2r8w3n6cd")
	test.Tap(tab.stopSel)
	test.Tap(dialogButtons(t, w)["Stop sandbox"])
	if strings.Join(f.stopped, ",") != "p9d2r8w3n6cd" {
		t.Errorf("Stop sandbox stopped %v", f.stopped)
	}
	if !tab.stopSel.Disabled() {
		t.Error("Stop sandbox still enabled while it stops")
	}

	// The client filter.
	tab.Set(viewRows())
	tab.grid.table.Select(widget.TableCellID{Row: 2, Col: 1}) // k3j5 (Claude Desktop)
	if got := tab.ClientChoices(); !slices.Equal(got, []string{allClients, "Claude Desktop", "Cursor", unnamedClient}) {
		t.Errorf("client choices %v", got)
	}
	tab.clients.SetSelected("Cursor")
	if got := strings.Join(tab.Shown(), ","); got != "p9d2r8w3n6cd" {
		t.Errorf("Cursor's rows: %s", got)
	}
	if tab.selected != "" || !tab.stopSel.Disabled() {
		t.Error("a row the filter hides stays selected: Stop would act on it unseen")
	}
	if want := "Showing 1 of 4 sandboxes · 1 warm: those Cursor started."; tab.summary.Text != want {
		t.Errorf("summary %q, want %q", tab.summary.Text, want)
	}
	next = viewRows()
	next.Rows = slices.Delete(next.Rows, 2, 3) // Cursor's sandbox went
	tab.Set(next)
	if len(tab.Shown()) != 0 || !tab.empty.Visible() || !strings.Contains(tab.empty.Text, "No sandboxes of Cursor") {
		t.Errorf("Cursor's last sandbox gone: shown %v, empty %v %q", tab.Shown(), tab.empty.Visible(), tab.empty.Text)
	}
	if got := tab.ClientChoices(); !slices.Contains(got, "Cursor") {
		t.Errorf("the chosen client left the choices: %v", got)
	}
	if tab.stopAll.Disabled() {
		t.Error("Stop all disabled while sandboxes of other clients run")
	}
	tab.SetClient(allClients)
	if len(tab.Shown()) != 3 || tab.clients.Selected != allClients {
		t.Errorf("All clients shows %v (select says %q)", tab.Shown(), tab.clients.Selected)
	}
}
