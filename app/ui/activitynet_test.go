package ui

import (
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// networkAudit is a sandbox's proxy lines as the server writes them: one
// allowed, one refused (with a host the sandbox spelled with control
// characters), one that failed, one without a record (the proxy closing).
func networkAudit() []state.AuditEntry {
	return []state.AuditEntry{
		{Time: now.Add(-time.Minute), Client: "claude-ai", Tool: "network", SandboxID: "k3j5q2m7x4ab", DurationMS: 820,
			Summary: "GET pypi.org:443 allowed (12288 B in, 512 B out)",
			Network: &state.NetworkAudit{Method: "CONNECT", Host: "pypi.org", Port: 443, Allowed: true, BytesIn: 12288, BytesOut: 512}},
		{Time: now.Add(-2 * time.Minute), Client: "claude-ai", Tool: "network", SandboxID: "k3j5q2m7x4ab", DurationMS: 1,
			Summary: "refused",
			Network: &state.NetworkAudit{Method: "GET", Host: "evil\x1b[2J.example", Port: 80, Reason: "evil.example is not in the sandbox's allowed entries", Status: 403}},
		{Time: now.Add(-3 * time.Minute), Client: "claude-ai", Tool: "network", SandboxID: "k3j5q2m7x4ab", DurationMS: 30,
			Summary: "failed",
			Network: &state.NetworkAudit{Method: "CONNECT", Host: "files.pythonhosted.org", Port: 443, Allowed: true, Error: "connection refused", Status: 502}},
		{Time: now.Add(-4 * time.Minute), Client: "claude-ai", Tool: "network", SandboxID: "k3j5q2m7x4ab", Summary: "proxy closed"},
	}
}

// TestActivityNetworkLines: a proxied connection's line reads as a
// connection (what, where, allowed or why refused, bytes), never as a call
// with an exit code; "Errors only" keeps the refused and failed ones, and
// the dialog of a line shows its record, cleaned.
func TestActivityNetworkLines(t *testing.T) {
	w, f := newWindow(t)
	f.audit = networkAudit()
	w.Show()
	w.SelectTab(TabActivity)
	tests := []struct {
		row             int
		summary, result string
	}{
		{0, "CONNECT pypi.org:443 allowed (12 KB in, 512 B out)", "allowed\n820 ms"},
		{1, "GET evil[2J.example:80 refused: evil.example is not in the sandbox's allowed entries", "refused\n1 ms"},
		{2, "CONNECT files.pythonhosted.org:443 allowed, failed: connection refused (0 B in, 0 B out)", "failed\n30 ms"},
		{3, "proxy closed", "–\n0 ms"},
	}
	for _, tc := range tests {
		if got := w.Activity.cell(tc.row, 3); got != tc.summary {
			t.Errorf("row %d summary = %q, want %q", tc.row, got, tc.summary)
		}
		if got := w.Activity.cell(tc.row, 4); got != tc.result {
			t.Errorf("row %d result = %q, want %q", tc.row, got, tc.result)
		}
	}
	golden(t, w, "activity-network")

	w.Activity.errsOnly.SetChecked(true)
	if got := w.Activity.Shown(); len(got) != 2 || got[0].Network.Allowed || got[1].Network.Error == "" {
		t.Errorf("errors only shows %+v, want the refused and the failed connection", got)
	}
	w.Activity.errsOnly.SetChecked(false)

	w.Activity.grid.table.Select(widget.TableCellID{Row: 1, Col: 3})
	top := w.Window().Canvas().Overlays().Top()
	if top == nil {
		t.Fatal("a click on a network line opened nothing")
	}
	text := overlayText(top)
	for _, want := range []string{"Claude Desktop", "network", "GET evil[2J.example:80", "refused: evil.example is not", "403", "0 B in, 0 B out"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog lacks %q: %q", want, text)
		}
	}
	for _, bad := range []string{"\x1b", "exit code", "finished"} {
		if strings.Contains(text, bad) {
			t.Errorf("the dialog shows %q: %q", bad, text)
		}
	}
}
