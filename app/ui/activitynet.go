package ui

import (
	"net"
	"strconv"
	"strings"

	"fyne.io/fyne/v2/widget"

	"github.com/mcp-sandbox/mcp-sandbox/app/sandboxwatch"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// toolNetwork is the tool name of the audit lines an allowlist sandbox's
// proxy writes, one per connection (and one when it closes).
const toolNetwork = "network"

// isNetwork says whether e is a proxied connection's line rather than a
// tool call.
func isNetwork(e state.AuditEntry) bool { return e.Tool == toolNetwork }

// netTarget is the host and port a connection asked for, cleaned: the
// sandbox chose the name. A request that never named one reads so.
func netTarget(n *state.NetworkAudit) string {
	if n.Host == "" {
		return "(no host named)"
	}
	return cleanText(net.JoinHostPort(n.Host, strconv.Itoa(n.Port)), 300)
}

// netOutcome is what became of a connection: "allowed", "refused: why"
// or "allowed, failed: why".
func netOutcome(n *state.NetworkAudit) string {
	switch {
	case !n.Allowed:
		return "refused: " + orDash(cleanText(n.Reason, 300))
	case n.Error != "":
		return "allowed, failed: " + cleanText(n.Error, 300)
	}
	return "allowed"
}

// netBytes is "12 KB in, 1 KB out" (in: what reached the sandbox).
func netBytes(n *state.NetworkAudit) string {
	return sandboxwatch.Bytes(uint64(max(n.BytesIn, 0))) + " in, " + sandboxwatch.Bytes(uint64(max(n.BytesOut, 0))) + " out"
}

// netSummary is the Summary cell of a network line, built from its
// record: "GET pypi.org:443 allowed (12 KB in, 1 KB out)". A line with
// no record (the proxy closing) shows the server's summary.
func netSummary(e state.AuditEntry) string {
	n := e.Network
	if n == nil {
		return cleanText(e.Summary, 300)
	}
	method := cleanText(n.Method, 16)
	if method != "" {
		method += " "
	}
	s := method + netTarget(n) + " " + netOutcome(n)
	if n.Allowed {
		s += " (" + netBytes(n) + ")"
	}
	// The server notes lines its budget left out after the bytes.
	if i := strings.LastIndex(e.Summary, "; "); i >= 0 && strings.Contains(e.Summary[i:], "not logged") {
		s += cleanText(e.Summary[i:], 120)
	}
	return s
}

// netResult is the Result cell's first line for a network line: a word,
// never an exit code.
func netResult(e state.AuditEntry) string {
	switch n := e.Network; {
	case n == nil:
		return "–"
	case !n.Allowed:
		return "refused"
	case n.Error != "":
		return "failed"
	}
	return "allowed"
}

// netForm adds a connection's fields to the call dialog's form.
func netForm(form *widget.Form, n *state.NetworkAudit, text func(string) *widget.Label) {
	form.Append("Connection", text(strings.TrimSpace(cleanText(n.Method, 16)+" "+netTarget(n))))
	outcome := text(netOutcome(n))
	if !n.Allowed || n.Error != "" {
		outcome.Importance = widget.WarningImportance
	}
	form.Append("Outcome", outcome)
	if n.Status != 0 {
		form.Append("HTTP status", text(strconv.Itoa(n.Status)))
	}
	form.Append("Bytes", text(netBytes(n)))
}
