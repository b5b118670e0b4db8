package ui

import (
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/dockerhost"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// longImage and longClient are what people do run: an image from a local
// registry with a deep path, and a client that names itself at length.
const (
	longImage  = "127.0.0.1:5000/some/long/name/python-data-science-with-plotting:3.12-bookworm-20260501"
	longClient = "claude-ai (Claude Desktop 0.9.3, profile work-laptop-primary)"
)

// longData fills every tab with the longest values the window meets.
func longData(w *Window, f *fakes) {
	st := statusInfo()
	st.Docker.Candidates = append(st.Docker.Candidates,
		dockerhost.Candidate{Host: "unix:///home/someone-with-a-long-name/.local/share/containers/podman/machine/podman-machine-default/podman.sock", Source: "Podman machine", Missing: true,
			Error: "nothing at /home/someone-with-a-long-name/.local/share/containers/podman/machine/podman-machine-default/podman.sock"})
	st.Docker.Chosen = &st.Docker.Candidates[0]
	st.Server.Path = "/home/someone-with-a-long-name/.local/share/applications/mcp-sandbox/bin/mcp-sandbox"
	w.Status.Set(st)

	rows := sandboxRows()
	r := rows.Rows[0]
	r.ID, r.Image, r.Client = "k3j5q2m7x4ab9z8y7w6v5u4t", longImage, longClient
	r.Network, r.Traffic = "allowlist", hostileTraffic()
	rows.Rows = append(rows.Rows, r)
	w.Sandboxes.Set(rows)

	f.clients = []ClientRow{
		{Name: "claude", Display: "Claude Desktop", Installed: true, Configured: true, Matches: true,
			Path:       `C:\Users\someone-with-a-long-name\AppData\Roaming\Claude\claude_desktop_config.json`,
			LastBackup: `C:\Users\someone-with-a-long-name\AppData\Roaming\Claude\claude_desktop_config.json.20260501-115900.bak`},
		{Name: "cursor", Display: "Cursor", Installed: true, Configured: true, Path: "/home/me/.cursor/mcp.json"},
		{Name: "vscode", Display: "Visual Studio Code - Insiders", Installed: true, Path: "/home/me/.config/Code - Insiders/User/mcp.json",
			Problem: "line 3: invalid character '}' looking for beginning of object key string"},
		{Name: "zed", Display: "Zed", Path: "/home/me/.config/zed/settings.json"},
	}
	code0, code137 := 0, 137
	f.audit = []state.AuditEntry{
		{Time: now.Add(-time.Minute), Client: longClient, Tool: "sandbox_create", SandboxID: "k3j5q2m7x4ab9z8y7w6v5u4t",
			Summary: "python in " + longImage, ExitCode: &code0, DurationMS: 1486},
		{Time: now.Add(-2 * time.Minute), Client: "cursor-vscode", Tool: "sandbox_exec", SandboxID: "p9d2r8w3n6cd",
			Summary: strings.Repeat("import numpy as np\nprint(np.arange(10).reshape(2, 5).sum(axis=1))\n", 5)[:297] + "...", ExitCode: &code137, DurationMS: 60000},
		{Time: now.Add(-9 * time.Minute), Client: "claude-ai", Tool: "sandbox_create", Summary: "MCP Sandbox is paused from its tray; choose Start in the tray menu to resume", Error: true, DurationMS: 3},
	}
}

// TestTabsShowEverything: every tab, at the default size and at 800×560,
// filled with long image names, client names, paths and summaries: no
// table is wider than its window (no sideways scroll, the Stop button in
// reach), no label is cut short with an ellipsis, and no wrapped label is
// squeezed shorter than its lines. MCP_SANDBOX_SCREENSHOT_DIR=DIR writes each
// tab's picture there.
func TestTabsShowEverything(t *testing.T) {
	shots := os.Getenv("MCP_SANDBOX_SCREENSHOT_DIR")
	for _, size := range []fyne.Size{{Width: 1120, Height: 700}, {Width: 800, Height: 560}} {
		w, f := newWindow(t)
		longData(w, f)
		w.Settings.Reload()
		w.Show()
		w.Window().Resize(size)
		for _, tab := range []string{TabStatus, TabSandboxes, TabClients, TabSettings, TabActivity, TabChanges} {
			w.SelectTab(tab)
			if tab == TabSandboxes {
				// A selected row's details line, in full.
				w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 2, Col: 1})
			}
			name := strings.ToLower(tab) + "-" + sizeName(size)
			c := w.Window().Canvas()
			if shots != "" {
				writePNG(t, c, filepath.Join(shots, "long-"+name+".png"))
			}
			if min := w.tabs.MinSize(); min.Width > size.Width || min.Height > size.Height {
				t.Errorf("%s: the window needs at least %v", name, min)
			}
			for _, g := range []*grid{w.Sandboxes.grid, w.Clients.grid, w.Activity.grid} {
				if !g.table.Visible() || g.table.Size().Width == 0 {
					continue
				}
				// Each column is followed by a separator of theme.Padding.
				sum := theme.Padding() * float32(len(g.widths)-1)
				for _, w := range g.widths {
					sum += w
				}
				if got := g.table.Size().Width; sum > got {
					t.Errorf("%s: the columns need %v px, the table has %v: it scrolls sideways", name, sum, got)
				}
			}
			checkNothingCut(t, name, c.Content())
		}
	}
}

// TestTableRowsShowWholeValues: the Sandboxes row shows every limit, the
// full id, image and client, each whole on its lines.
func TestTableRowsShowWholeValues(t *testing.T) {
	w, f := newWindow(t)
	longData(w, f)
	w.Show()
	w.Window().Resize(fyne.NewSize(800, 560))
	w.SelectTab(TabSandboxes)
	row := 2
	all := ""
	for c := range sandboxColumns {
		all += w.Sandboxes.grid.Cell(row, c) + "\n"
	}
	joined := strings.ReplaceAll(all, "\n", "")
	for _, want := range []string{"k3j5q2m7x4ab9z8y7w6v5u4t", longImage, longClient, "MB / 512 MB", "256 pids", "allowlist · 40 hosts · 9 refused", "↓ 1.3 KB ↑ 300 B · 1 open", "timeout 60 s", "python"} {
		if !strings.Contains(joined, strings.ReplaceAll(want, " ", "")) && !strings.Contains(strings.ReplaceAll(joined, " ", ""), strings.ReplaceAll(want, " ", "")) {
			t.Errorf("row %d does not show %q whole:\n%s", row, want, all)
		}
	}
	if !strings.Contains(all, "\n") || strings.Count(w.Sandboxes.grid.Cell(row, 3), "\n") < 1 {
		t.Errorf("the long image was not wrapped: %q", w.Sandboxes.grid.Cell(row, 3))
	}
	if w.Sandboxes.grid.table.Size().Width < sandboxColumns[0].width {
		t.Errorf("the Stop column is out of reach")
	}

	// The Clients row of the long path, and the Activity row of the long
	// summary, show them whole.
	w.SelectTab(TabClients)
	if got := strings.ReplaceAll(w.Clients.grid.Cell(0, 2), "\n", ""); !strings.Contains(got, f.clients[0].Path) || !strings.Contains(got, "claude_desktop_config.json.20260501-115900.bak") {
		t.Errorf("clients row 0 = %q", got)
	}
	w.SelectTab(TabActivity)
	sum := f.audit[1].Summary
	if got := strings.ReplaceAll(w.Activity.grid.Cell(1, 3), "\n", ""); strings.ReplaceAll(got, " ", "") != strings.ReplaceAll(strings.ReplaceAll(sum, "\n", " ⏎ "), " ", "") {
		t.Errorf("activity summary = %q", got)
	}
}

func TestFitLines(t *testing.T) {
	test.NewTempApp(t)
	w := textWidth("127.0.0.1:5000/some/")
	got := fitLines("127.0.0.1:5000/some/long/name:tag", w)
	if strings.Join(got, "") != "127.0.0.1:5000/some/long/name:tag" || len(got) < 2 || got[0] != "127.0.0.1:5000/some/" {
		t.Errorf("image lines = %q", got)
	}
	for _, l := range got {
		if textWidth(l) > w {
			t.Errorf("line %q is %v wide, more than %v", l, textWidth(l), w)
		}
	}
	// A word wider than the column is broken inside; spaces at a break go.
	got = fitLines("ab "+strings.Repeat("x", 40), textWidth("xxxxxxxxxx"))
	if got[0] != "ab" || strings.Join(got[1:], "") != strings.Repeat("x", 40) {
		t.Errorf("long word lines = %q", got)
	}
	if got := fitLines("one\ntwo", 1000); len(got) != 2 {
		t.Errorf("line breaks kept: %q", got)
	}
}

func sizeName(s fyne.Size) string { return fmt.Sprintf("%gx%g", s.Width, s.Height) }

func writePNG(t *testing.T, c fyne.Canvas, path string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := png.Encode(f, c.Capture()); err != nil {
		t.Fatal(err)
	}
}

// checkNothingCut walks what is shown and fails on a label whose text
// does not fit it: a single-line label cut with an ellipsis, or a wrapped
// one given less height than its lines need.
func checkNothingCut(t *testing.T, name string, root fyne.CanvasObject) {
	t.Helper()
	pad := theme.InnerPadding()
	visibleLabels(root, func(l *widget.Label) {
		if l.Size().Width == 0 || l.Text == "" {
			return
		}
		if l.Wrapping != fyne.TextWrapOff {
			if min := l.MinSize().Height; l.Size().Height+0.5 < min {
				t.Errorf("%s: label %q is %v tall, its lines need %v", name, l.Text, l.Size().Height, min)
			}
			return
		}
		size := theme.TextSize()
		if l.SizeName != "" {
			size = theme.Size(l.SizeName)
		}
		for _, line := range strings.Split(l.Text, "\n") {
			if w := fyne.MeasureText(line, size, l.TextStyle).Width; w > l.Size().Width-2*pad+0.5 {
				t.Errorf("%s: %q is %v wide, its label only %v: cut short", name, line, w, l.Size().Width-2*pad)
			}
		}
	})
}

// visibleLabels calls f for each label shown under o.
func visibleLabels(o fyne.CanvasObject, f func(*widget.Label)) {
	if o == nil || !o.Visible() {
		return
	}
	switch c := o.(type) {
	case *widget.Label:
		f(c)
	case *headerLabel:
		f(&c.Label)
	case *fyne.Container:
		for _, k := range c.Objects {
			visibleLabels(k, f)
		}
	case fyne.Widget:
		for _, k := range test.WidgetRenderer(c).Objects() {
			visibleLabels(k, f)
		}
	}
}
