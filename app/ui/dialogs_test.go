package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

// dialogButtons returns the buttons of the dialog on top of the window.
func dialogButtons(t *testing.T, w *Window) map[string]*widget.Button {
	t.Helper()
	top := w.Window().Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("no dialog is shown")
	}
	out := map[string]*widget.Button{}
	walk(top, func(o any) {
		if b, ok := o.(*widget.Button); ok && b.Visible() {
			out[b.Text] = b
		}
	})
	return out
}

func labels(m map[string]*widget.Button) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Destructive questions say what their button does: "Stop 2 sandboxes"
// and "Cancel", never "Yes" and "No"; Cancel does nothing.
func TestStopAllDialogNamesItsAction(t *testing.T) {
	w, f := newWindow(t)
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(sandboxRows())
	test.Tap(w.Sandboxes.stopAll)
	bs := dialogButtons(t, w)
	if diff := cmp.Diff([]string{"Cancel", "Stop 2 sandboxes"}, labels(bs)); diff != "" {
		t.Fatalf("dialog buttons (-want +got):\n%s", diff)
	}
	test.Tap(bs["Cancel"])
	if f.stopAll != 0 {
		t.Fatal("Cancel stopped the sandboxes")
	}
	test.Tap(w.Sandboxes.stopAll)
	test.Tap(dialogButtons(t, w)["Stop 2 sandboxes"])
	if f.stopAll != 1 {
		t.Errorf("StopAll called %d times, want 1", f.stopAll)
	}
}

// The Pause question names the HTTP server only when one is configured,
// counts sandboxes in words ("1 sandbox runs"), and its button is Pause.
func TestPauseDialogSaysOnlyWhatPauseDoes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      sandboxwatch.Count
		httpOn bool
		want   []string
		absent []string
	}{
		{"one sandbox, no HTTP", sandboxwatch.Count{Sandboxes: 1}, false, []string{"1 sandbox runs now."}, []string{"HTTP", "1 sandboxes", "warm"}},
		{"two with HTTP", sandboxwatch.Count{Sandboxes: 2}, true, []string{"2 sandboxes run now.", "stops the HTTP server"}, nil},
		{"one and a warm one", sandboxwatch.Count{Sandboxes: 1, Warm: 1}, false, []string{"1 sandbox runs now. 1 warm sandbox is kept ready."}, nil},
		{"none", sandboxwatch.Count{}, false, []string{"Pausing removes every sandbox"}, []string{"run now", "HTTP"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, _ := newWindow(t)
			paused := false
			ConfirmPause(w.Window(), tc.n, tc.httpOn, func() { paused = true })
			bs := dialogButtons(t, w)
			if diff := cmp.Diff([]string{"Cancel", "Pause"}, labels(bs)); diff != "" {
				t.Fatalf("dialog buttons (-want +got):\n%s", diff)
			}
			var text string
			walk(w.Window().Canvas().Overlays().Top(), func(o any) {
				if l, ok := o.(*widget.Label); ok {
					text += l.Text + "\n"
				}
			})
			for _, s := range tc.want {
				if !strings.Contains(text, s) {
					t.Errorf("dialog text %q lacks %q", text, s)
				}
			}
			for _, s := range tc.absent {
				if strings.Contains(text, s) {
					t.Errorf("dialog text %q has %q", text, s)
				}
			}
			test.Tap(bs["Pause"])
			if !paused {
				t.Error("Pause did not pause")
			}
		})
	}
}

// The deny lists in Settings show what the config adds to the built-in
// lists, and what is typed there is added to them: a person cannot empty
// the built-in list by editing this field.
func TestSettingsDenyListsAdd(t *testing.T) {
	w, f := newWindow(t)
	w.Settings.Reload()
	e := w.Settings.entries["files.read_deny"]
	if e == nil || e.Text != "" {
		t.Fatalf("read_deny field = %v, want empty (the built-in list is not shown)", e)
	}
	e.SetText("~/secrets, ~/.ssh")
	w.Settings.entries["files.write_deny"].SetText("~/bin2")
	w.Settings.Save()
	if f.saved == nil {
		t.Fatalf("not saved: %s", w.Settings.Message())
	}
	for _, want := range append(config.DefaultReadDeny(), "~/secrets") {
		if !slices.Contains(f.saved.Files.ReadDeny, want) {
			t.Errorf("saved read_deny lacks %q: %v", want, f.saved.Files.ReadDeny)
		}
	}
	if !slices.Contains(f.saved.Files.WriteDeny, "~/bin2") || !slices.Contains(f.saved.Files.WriteDeny, "~/.bashrc") {
		t.Errorf("saved write_deny = %v", f.saved.Files.WriteDeny)
	}
}

// Every Stop asks: a row's Stop, Stop sandbox under the table, Details ▸
// Stop and Stop all. In each question Cancel is the default (emphasised
// and focused, so Space presses it) and the destructive verb is shown as
// dangerous, never the default; Cancel stops nothing.
func TestEveryStopAsks(t *testing.T) {
	for _, tc := range []struct {
		name, verb string
		open       func(w *Window) *Window // returns the window the question shows over
	}{
		{"row Stop", "Stop sandbox", func(w *Window) *Window { w.Sandboxes.TapStop("p9d2r8w3n6cd"); return w }},
		{"Stop sandbox", "Stop sandbox", func(w *Window) *Window {
			w.Sandboxes.selected = "p9d2r8w3n6cd"
			w.Sandboxes.showDetails()
			test.Tap(w.Sandboxes.stopSel)
			return w
		}},
		{"Stop all", "Stop 2 sandboxes", func(w *Window) *Window { test.Tap(w.Sandboxes.stopAll); return w }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, f := newWindow(t)
			w.SelectTab(TabSandboxes)
			w.Sandboxes.Set(sandboxRows())
			tc.open(w)
			bs := dialogButtons(t, w)
			if diff := cmp.Diff([]string{"Cancel", tc.verb}, labels(bs)); diff != "" {
				t.Fatalf("dialog buttons (-want +got):\n%s", diff)
			}
			checkSafeDefault(t, w.Window(), bs["Cancel"], bs[tc.verb])
			test.Tap(bs["Cancel"])
			if len(f.stopped) != 0 || f.stopAll != 0 {
				t.Fatalf("Cancel stopped: %v, stop all %d", f.stopped, f.stopAll)
			}
			if w.Window().Canvas().Overlays().Top() != nil {
				t.Error("Cancel left the question on screen")
			}
		})
	}
}

// checkSafeDefault fails unless cancel is the question's default and verb
// is dangerous and not the default.
func checkSafeDefault(t *testing.T, win fyne.Window, cancel, verb *widget.Button) {
	t.Helper()
	if cancel.Importance != widget.HighImportance || win.Canvas().Focused() != cancel {
		t.Errorf("Cancel: importance %v, focused %v; want it the default", cancel.Importance, win.Canvas().Focused() == cancel)
	}
	if verb.Importance != widget.DangerImportance || win.Canvas().Focused() == verb {
		t.Errorf("%s: importance %v; want danger, not the default", verb.Text, verb.Importance)
	}
}

// The Stop all question counts what is listed while it shows: a sandbox
// that went meanwhile is no longer counted, and with nothing left its
// button is off.
func TestStopAllCountIsLive(t *testing.T) {
	w, f := newWindow(t)
	w.SelectTab(TabSandboxes)
	w.Sandboxes.Set(sandboxRows())
	test.Tap(w.Sandboxes.stopAll)
	one := sandboxRows()
	one.Rows = one.Rows[:1]
	w.Sandboxes.Set(one)
	bs := dialogButtons(t, w)
	if diff := cmp.Diff([]string{"Cancel", "Stop 1 sandbox"}, labels(bs)); diff != "" {
		t.Fatalf("after a sandbox went (-want +got):\n%s", diff)
	}
	if text := overlayText(w.Window().Canvas().Overlays().Top()); !strings.Contains(text, "This removes 1 sandbox and") {
		t.Errorf("question %q does not count the one listed", text)
	}
	w.Sandboxes.Set(sandboxwatch.Snapshot{})
	if b := dialogButtons(t, w)["Stop 0 sandboxes"]; b == nil || !b.Disabled() {
		t.Errorf("with nothing listed the verb is %v, want it off", b)
	}
	w.Sandboxes.Set(one)
	test.Tap(dialogButtons(t, w)["Stop 1 sandbox"])
	if f.stopAll != 1 {
		t.Errorf("StopAll called %d times, want 1", f.stopAll)
	}
}
