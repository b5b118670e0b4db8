package ui

import (
	"context"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/proposal"
)

// TestChangesTab: every waiting proposal shows with its summary and the
// whole diff of each file; Apply and Reject decide it by id, and the tab
// says what came of it and reads the list again.
func TestChangesTab(t *testing.T) {
	a := test.NewTempApp(t)
	waiting := []*proposal.Proposal{{ID: "p1", SandboxID: "sb1", Summary: "fix add", HostPath: "/home/me/proj", Deadline: now,
		Files: []proposal.File{
			{HostPath: "/home/me/proj/arith.py", Change: proposal.Modified, Added: 1, Removed: 1, Diff: "@@ -1 +1 @@\n-return a - b\n+return a + b\n"},
			{HostPath: "/home/me/proj/test_arith.py", Change: proposal.Added, Added: 1, Diff: "@@ -0,0 +1 @@\n+import arith\n"},
		}}}
	var decided []string
	act := ChangesActions{
		List: func() []*proposal.Proposal { return waiting },
		Decide: func(_ context.Context, id string, apply bool) (string, error) {
			decided = append(decided, id+map[bool]string{true: " apply", false: " reject"}[apply])
			waiting = nil
			return "Applied 2 file change(s) to /home/me/proj.", nil
		},
	}
	w := New(a, Options{Actions: Actions{Changes: act}, Now: func() time.Time { return now }, Go: func(g func()) { g() }})
	t.Cleanup(w.Close)
	w.Show()
	w.SelectTab(TabChanges)
	text := allText(w.Changes.content)
	for _, want := range []string{"Changes to /home/me/proj", "fix add", "modified  +1 −1  /home/me/proj/arith.py", "+return a + b", "+import arith"} {
		if !strings.Contains(text, want) {
			t.Errorf("the tab lacks %q:\n%s", want, text)
		}
	}
	if w.Changes.Shown() != 1 {
		t.Fatalf("shows %d proposals", w.Changes.Shown())
	}
	w.Changes.Decide("p1", true)
	if len(decided) != 1 || decided[0] != "p1 apply" || !strings.Contains(w.Changes.Last, "Applied 2") {
		t.Errorf("decided %v, last %q", decided, w.Changes.Last)
	}
	if w.Changes.Shown() != 0 || !strings.Contains(allText(w.Changes.content), "No changes wait") {
		t.Errorf("after the decision the tab shows %d proposals", w.Changes.Shown())
	}
}

// allText is the text of every label, card and accordion title below o.
func allText(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch v := o.(type) {
		case *widget.Label:
			b.WriteString(v.Text + "\n")
		case *widget.Card:
			b.WriteString(v.Title + "\n" + v.Subtitle + "\n")
			walk(v.Content)
		case *widget.Accordion:
			for _, it := range v.Items {
				b.WriteString(it.Title + "\n")
				walk(it.Detail)
			}
		case *fyne.Container:
			for _, c := range v.Objects {
				walk(c)
			}
		case *container.Scroll:
			walk(v.Content)
		}
	}
	walk(o)
	return b.String()
}
