package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// hostileTranscript is a transcript as a sandbox could make it: terminal
// escapes, a carriage return that would overwrite a line, a bidi
// override, a NUL, invalid UTF-8.
const hostileTranscript = "=== 2026-05-01T11:59:00Z run_code (python)\n" +
	"import matplotlib.pyplot as plt\nplt.plot([1, 2, 3])\nplt.savefig('plot.png')\n" +
	"--- exit_code=0 duration_ms=812\n--- stdout\n\x1b[31mred\x1b[0m saved\rOVERWRITE \u202egnp.exe\x00 \xff\n" +
	"=== 2026-05-01T11:59:30Z exec\n$ ls -l\n--- exit_code=2 duration_ms=14\n--- stderr\nls: cannot access 'x': No such file or directory\n"

// detailsFakes feed a details view and record Save's arguments.
type detailsFakes struct {
	saved [][2]string
}

func (f *detailsFakes) actions() DetailsActions {
	return DetailsActions{
		Transcript: func(context.Context, string) (string, error) { return hostileTranscript, nil },
		Files: func(context.Context, string) ([]backend.FileEntry, bool, error) {
			return []backend.FileEntry{
				{Path: "/workspace/out", IsDir: true},
				{Path: "/workspace/out/data.csv", Size: 1234},
				{Path: "/workspace/plot.png", Size: 20 << 10},
				{Path: "/workspace/x\x1b[2Jy", Size: 1},
				{Path: "/workspace/shadow", Link: "/etc/shadow"},
			}, false, nil
		},
		Save: func(_ context.Context, _, src, dest string, _ bool) (sandbox.CopyOutResult, error) {
			f.saved = append(f.saved, [2]string{src, dest})
			if strings.Contains(dest, "denied") {
				return sandbox.CopyOutResult{}, fmt.Errorf("%w: %s is in files.write_deny", sandbox.ErrPolicy, dest)
			}
			return sandbox.CopyOutResult{Files: 1, Bytes: 20 << 10, HostPath: dest}, nil
		},
	}
}

// goldenCanvas is golden for any window's canvas.
func goldenCanvas(t *testing.T, c fyne.Canvas, name string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(filepath.Join("testdata", name+".xml"), []byte(test.RenderToMarkup(c)), 0o644); err != nil {
			t.Fatal(err)
		}
		f, err := os.Create(filepath.Join("testdata", name+".png"))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := png.Encode(f, c.Capture()); err != nil {
			t.Fatal(err)
		}
		return
	}
	test.AssertRendersToMarkup(t, name+".xml", c)
	test.AssertRendersToImage(t, name+".png", c)
}

func TestDetailsView(t *testing.T) {
	w, f := newWindow(t)
	df := &detailsFakes{}
	w.Sandboxes.act.Details = df.actions()
	w.SelectTab(TabSandboxes)
	snap := sandboxRows()
	snap.Rows[0].Limits.WorkspaceMB = 1024
	w.Sandboxes.Set(snap)
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	d.Window().Resize(fyne.NewSize(780, 720))
	goldenCanvas(t, d.Window().Canvas(), "details")

	text := d.TranscriptText()
	for _, bad := range []string{"\x1b", "\r", "\u202e", "\x00", "\xff"} {
		if strings.Contains(text, bad) {
			t.Errorf("the transcript shows %q: %q", bad, text)
		}
	}
	for _, want := range []string{"plt.savefig('plot.png')", "exit_code=2", "No such file"} {
		if !strings.Contains(text, want) {
			t.Errorf("the transcript lacks %q", want)
		}
	}
	for _, e := range d.Files() {
		if strings.ContainsRune(e.Path, 0x1b) {
			t.Errorf("a file name shows ESC: %q", e.Path)
		}
	}
	if got := w.Sandboxes.OpenDetails("k3j5q2m7x4ab"); got != d {
		t.Error("a second open made a second view")
	}

	// Save to: the fence's refusal is shown, not swallowed.
	d.SaveTo("/workspace/plot.png", "/home/me/denied/plot.png")
	if top := d.Window().Canvas().Overlays().Top(); top == nil || !strings.Contains(overlayText(top), "write_deny") {
		t.Errorf("a refused save shows no error naming the fence")
	}
	d.SaveTo("/workspace/plot.png", "/home/me/out/plot.png")
	if len(df.saved) != 2 || df.saved[1] != [2]string{"/workspace/plot.png", "/home/me/out/plot.png"} {
		t.Errorf("saved %v", df.saved)
	}

	// Stop asks, with the verb on the button, then stops.
	d.confirmStop()
	btns := map[string]*widget.Button{}
	walk(d.Window().Canvas().Overlays().Top(), func(o any) {
		if b, ok := o.(*widget.Button); ok {
			btns[b.Text] = b
		}
	})
	if btns["Stop sandbox"] == nil || btns["Cancel"] == nil {
		t.Fatalf("stop dialog buttons: %v", btns)
	}
	checkSafeDefault(t, d.Window(), btns["Cancel"], btns["Stop sandbox"])
	test.Tap(btns["Stop sandbox"])
	if strings.Join(f.stopped, ",") != "k3j5q2m7x4ab" {
		t.Errorf("stopped %v", f.stopped)
	}
}

// TestDetailsViewSandboxGone: the sandbox vanishes while its view is open
// (stopped, expired, its server gone): the view says so and lives on; an
// engine that does not answer is not taken for the sandbox being gone.
func TestDetailsViewSandboxGone(t *testing.T) {
	w, _ := newWindow(t)
	df := &detailsFakes{}
	w.Sandboxes.act.Details = df.actions()
	w.Sandboxes.Set(sandboxRows())
	d := w.Sandboxes.OpenDetails("p9d2r8w3n6cd")
	d.Window().Resize(fyne.NewSize(780, 720))

	w.Sandboxes.Set(sandboxwatch.Snapshot{Err: errors.New("Docker stopped answering")})
	if d.Gone() {
		t.Error("an engine that does not answer made the view say the sandbox is gone")
	}
	w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: sandboxRows().Rows[:1]})
	if !d.Gone() {
		t.Fatal("the view does not say the sandbox is gone")
	}
	if !d.stop.Disabled() || !d.save.Disabled() {
		t.Error("Stop or Save to still enabled for a gone sandbox")
	}
	d.Reload()     // must not reach for the files of a gone sandbox
	for range 20 { // churn on while the view is open
		w.Sandboxes.Set(sandboxwatch.Snapshot{})
		w.Sandboxes.Set(sandboxRows())
	}
	goldenCanvas(t, d.Window().Canvas(), "details-gone")
	d.Close()
	if w.Sandboxes.Details("p9d2r8w3n6cd") != nil {
		t.Error("a closed view is still listed")
	}
}

func TestActivityRowOpensCall(t *testing.T) {
	w, f := newWindow(t)
	w.Sandboxes.Set(sandboxRows())
	code := 1
	f.audit = []state.AuditEntry{
		{Time: now.Add(-time.Minute), Client: "claude-ai", Tool: "sandbox_exec", SandboxID: "k3j5q2m7x4ab",
			Summary: "python3 -c 'print(1)' \x1b[2J" + strings.Repeat(" long", 50), ExitCode: &code, DurationMS: 1486,
			Error: true, ErrorText: "Traceback (most recent call last):\n  NameError: x\x1b]0;title\x07", Output: "partial-output-7"},
		{Time: now.Add(-5 * time.Minute), Client: "cursor-vscode", Tool: "run_code", SandboxID: "gonegonegone", Summary: "print(2)"},
	}
	w.Show()
	w.SelectTab(TabActivity)
	// A click on a row opens its call.
	w.Activity.grid.table.Select(widget.TableCellID{Row: 0, Col: 3})
	top := w.Window().Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("a click on a row opened nothing")
	}
	text := overlayText(top)
	for _, want := range []string{"Claude Desktop", "sandbox_exec", "failed (exit 1)", "1.5 s", "NameError", "long long", "partial-output-7"} {
		if !strings.Contains(text, want) {
			t.Errorf("the call dialog lacks %q: %q", want, text)
		}
	}
	if strings.ContainsAny(text, "\x1b\x07") {
		t.Errorf("the call dialog shows control characters: %q", text)
	}
	goldenCanvas(t, w.Window().Canvas(), "activity-call")
	var open *widget.Button
	walk(top, func(o any) {
		if b, ok := o.(*widget.Button); ok && b.Text == "Open details…" {
			open = b
		}
	})
	if open == nil {
		t.Fatal("no way from the call to its running sandbox")
	}
	test.Tap(open)
	if w.Sandboxes.Details("k3j5q2m7x4ab") == nil {
		t.Error("Open details… opened no details view")
	}
	if d := w.Activity.OpenCall(1); d == nil || !strings.Contains(overlayText(w.Window().Canvas().Overlays().Top()), "(gone)") {
		t.Error("a call whose sandbox is gone does not say so")
	}
	if w.Activity.OpenCall(5) != nil {
		t.Error("a row past the end opened a call")
	}
}

// overlayText is every label's text in o, joined.
func overlayText(o fyne.CanvasObject) string {
	var b strings.Builder
	walk(o, func(x any) {
		switch l := x.(type) {
		case *widget.Label:
			b.WriteString(l.Text + "\n")
		case *widget.RichText:
			b.WriteString(l.String() + "\n")
		}
	})
	return b.String()
}

// A double click on a row (two clicks on it within DoubleClick) opens its
// details; one click only selects it.
func TestSandboxRowDoubleClickOpensDetails(t *testing.T) {
	w, _ := newWindow(t)
	w.Sandboxes.Set(sandboxRows())
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 1, Col: 2})
	if w.Sandboxes.Details("p9d2r8w3n6cd") != nil {
		t.Fatal("one click opened the details")
	}
	if w.Sandboxes.openBtn.Disabled() {
		t.Error("Details… is disabled with a row selected")
	}
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 1, Col: 1})
	if w.Sandboxes.Details("p9d2r8w3n6cd") == nil {
		t.Fatal("a double click did not open the details")
	}
}

// Two clicks on the same sandbox at different places (its row moved
// under the pointer between them, as rows do while sandboxes come and go)
// are two single clicks: only a double click on the spot opens details.
func TestSandboxRowThatMovedIsNoDoubleClick(t *testing.T) {
	w, _ := newWindow(t)
	rows := sandboxRows()
	w.Sandboxes.Set(rows)
	second, ok := w.Sandboxes.grid.Key(1)
	if !ok {
		t.Fatal("no second row")
	}
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 1, Col: 2})
	first, _ := w.Sandboxes.grid.Key(0)
	rows.Rows = slices.DeleteFunc(rows.Rows, func(r sandboxwatch.Row) bool { return r.ID == first })
	w.Sandboxes.Set(rows)
	if k, _ := w.Sandboxes.grid.Key(0); k != second {
		t.Fatalf("row 0 is %q after the first went, want %q", k, second)
	}
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 0, Col: 2})
	if w.Sandboxes.Details(second) != nil {
		t.Fatal("a click on a row that had moved under the pointer opened its details")
	}
	w.Sandboxes.grid.table.Select(widget.TableCellID{Row: 0, Col: 1})
	if w.Sandboxes.Details(second) == nil {
		t.Fatal("a double click on the spot did not open the details")
	}
}

// A view opened before the first listing (the window's --details at
// start) does not take the empty snapshot for the sandbox being gone; a
// listing without it does.
func TestDetailsViewBeforeFirstListing(t *testing.T) {
	w, _ := newWindow(t)
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	if d.Gone() {
		t.Fatal("the empty snapshot before the first listing made the sandbox gone")
	}
	w.Sandboxes.Set(sandboxRows())
	if d.Gone() {
		t.Fatal("a listed sandbox is gone")
	}
	d2 := w.Sandboxes.OpenDetails("nosuchsandbox")
	w.Sandboxes.Set(sandboxwatch.Snapshot{Rows: sandboxRows().Rows, Updated: now})
	if !d2.Gone() {
		t.Error("a sandbox no listing has is not said to be gone")
	}
}

// TestDetailsAsksForUsage: a details view puts usage on screen whichever
// tab the window shows (it opens from the Activity tab, or at start), so
// its bars show numbers, not "–"; closing it takes usage off again.
func TestDetailsAsksForUsage(t *testing.T) {
	a := test.NewTempApp(t)
	var seen []bool
	w := New(a, Options{OnUsageSeen: func(on bool) { seen = append(seen, on) }, Now: func() time.Time { return now }, Go: func(g func()) { g() }})
	defer w.Close()
	w.Show()
	w.SelectTab(TabActivity)
	if len(seen) != 0 {
		t.Fatalf("usage asked for on the Status and Activity tabs: %v", seen)
	}
	d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
	if len(seen) != 1 || !seen[0] {
		t.Fatalf("a details view did not ask for usage: %v", seen)
	}
	w.Sandboxes.Set(sandboxRows())
	if got := d.mem.TextFormatter(); got != "41 MB / 512 MB" {
		t.Errorf("memory bar says %q", got)
	}
	w.SelectTab(TabSandboxes)
	w.SelectTab(TabStatus)
	if len(seen) != 1 {
		t.Errorf("tab changes with a details view open changed usage: %v", seen)
	}
	d.Close()
	if len(seen) != 2 || seen[1] {
		t.Errorf("closing the last details view left usage on: %v", seen)
	}
	w.SelectTab(TabSandboxes)
	w.Hide()
	if len(seen) != 4 || !seen[2] || seen[3] {
		t.Errorf("the Sandboxes tab shown, then hidden: %v", seen)
	}
}

// TestDetailsShowsUsageSource: on Kubernetes the view says whose reading
// the usage is (the cluster's metrics API, or a read inside the sandbox,
// which code in it can misreport); Docker's own stats say nothing more.
func TestDetailsShowsUsageSource(t *testing.T) {
	for _, tc := range []struct {
		source, want string
	}{
		{"", ""},
		{backend.UsageMetrics, " · usage by the cluster's metrics API"},
		{backend.UsageInPod, " · usage read inside the sandbox"},
	} {
		t.Run(cmp.Or(tc.source, "docker"), func(t *testing.T) {
			w, _ := newWindow(t)
			w.Sandboxes.act.Details = (&detailsFakes{}).actions()
			snap := sandboxRows()
			snap.Rows[0].Usage.Source = tc.source
			w.Sandboxes.Set(snap)
			d := w.Sandboxes.OpenDetails("k3j5q2m7x4ab")
			got := d.limits.Text
			if !strings.HasSuffix(got, "expires in 18m"+tc.want) {
				t.Errorf("limits line %q, want it to end %q", got, "expires in 18m"+tc.want)
			}
		})
	}
}
