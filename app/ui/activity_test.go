package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// Activity says how each call ended in words, never "exit –" for a tool
// that ran no command nor the exit code a kill for time left behind.
func TestActivityOutcomesInWords(t *testing.T) {
	code := func(n int) *int { return &n }
	for _, tc := range []struct {
		name string
		e    state.AuditEntry
		want string
	}{
		{"ok without a command", state.AuditEntry{Tool: "read_file"}, "ok"},
		{"ok with exit 0", state.AuditEntry{Tool: "run_code", ExitCode: code(0)}, "ok"},
		{"exit 2", state.AuditEntry{Tool: "sandbox_exec", ExitCode: code(2)}, "failed (exit 2)"},
		{"timed out", state.AuditEntry{Tool: "run_code", ExitCode: code(124), TimedOut: true}, "timed out"},
		{"out of memory", state.AuditEntry{Tool: "run_code", ExitCode: code(137), OOMKilled: true}, "out of memory"},
		{"cancelled", state.AuditEntry{Tool: "run_code", Error: true, Cancelled: true}, "cancelled"},
		{"cancelled, logged before the flag", state.AuditEntry{Tool: "run_code", Error: true, ErrorText: "the sandbox engine failed: cancelled: context canceled"}, "cancelled"},
		{"an error", state.AuditEntry{Tool: "sandbox_create", Error: true, ErrorText: "paused"}, "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := outcome(tc.e); got != tc.want {
				t.Errorf("outcome = %q, want %q", got, tc.want)
			}
		})
	}
}

// Activity is in the order of the time it shows: when each call started,
// newest first, though the log holds them in the order they ended. Its
// Result column says the outcome in words.
func TestActivityChronological(t *testing.T) {
	w, f := newWindow(t)
	long := 124
	// As the log reads them, newest end first: the long call ended last.
	f.audit = []state.AuditEntry{
		{Time: now.Add(-10 * time.Minute), Client: "claude-ai", Tool: "run_code", Summary: "long", ExitCode: &long, TimedOut: true, DurationMS: (9 * time.Minute).Milliseconds()},
		{Time: now.Add(-5 * time.Minute), Client: "claude-ai", Tool: "read_file", Summary: "short", DurationMS: 10},
		{Time: now.Add(-7 * time.Minute), Client: "claude-ai", Tool: "list_files", Summary: "middle", DurationMS: 10},
	}
	w.Show()
	w.SelectTab(TabActivity)
	var got []string
	for i, e := range w.Activity.Shown() {
		got = append(got, e.Summary+" "+strings.Split(w.Activity.cell(i, 4), "\n")[0])
	}
	if diff := cmp.Diff([]string{"short ok", "middle ok", "long timed out"}, got); diff != "" {
		t.Errorf("Activity's order and results (-want +got):\n%s", diff)
	}
	if d := strings.Split(w.Activity.cell(2, 4), "\n")[1]; d != "9 min 0 s" {
		t.Errorf("a 9-minute call lasted %q", d)
	}
}
