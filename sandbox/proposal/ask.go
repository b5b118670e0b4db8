package proposal

import (
	"fmt"
	"strings"
)

// Message is what the person reads before choosing Apply or Reject (an
// MCP elicitation, the tray's notification): the summary, every file with
// its +/− counts, and the first lines of the diffs, at most maxBytes
// (0: 4 KiB). The window shows the whole diffs from Files.
func (p *Proposal) Message(maxBytes int) string {
	if maxBytes <= 0 {
		maxBytes = 4 << 10
	}
	var b strings.Builder
	who := "An assistant"
	if p.SandboxID != "" {
		who += " (sandbox " + p.SandboxID + ")"
	}
	fmt.Fprintf(&b, "%s proposes changes to %s", who, p.HostPath)
	if p.Summary != "" {
		fmt.Fprintf(&b, ": %s", p.Summary)
	}
	b.WriteString("\n")
	for _, f := range p.Files {
		fmt.Fprintf(&b, "  %-8s +%d −%d  %s\n", f.Change, f.Added, f.Removed, f.HostPath)
	}
	if len(p.Skipped) > 0 {
		fmt.Fprintf(&b, "  (%d entries of the sandbox not proposed: links or special files)\n", len(p.Skipped))
	}
	for _, f := range p.Files {
		if b.Len() >= maxBytes {
			break
		}
		fmt.Fprintf(&b, "\n%s\n%s", f.HostPath, f.Diff)
	}
	s := b.String()
	if len(s) > maxBytes {
		s = s[:maxBytes]
		if i := strings.LastIndexByte(s, '\n'); i > 0 {
			s = s[:i+1]
		}
		s += "… (the MCP Sandbox window shows the whole diff)\n"
	}
	return s
}
