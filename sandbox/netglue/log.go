package netglue

import (
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// logLines is how many connections an allowlist sandbox's logs
// resource lists: the newest, from the same records as the audit log (a
// flood of connections replaces older lines, never grows the list).
const logLines = 64

// logReasonMax caps the reason or error a line quotes.
const logReasonMax = 200

// Log is the ring of a sandbox's newest connection lines, for its logs
// resource. Its zero value is ready to use.
type Log struct {
	mu    sync.Mutex
	lines [logLines]string
	next  int   // where the next line goes
	total int64 // lines ever added
}

// Add keeps one line for r: when, what, allowed or why refused, bytes
// each way and how long. The host comes from the sandbox: it is cleaned
// and capped.
func (l *Log) Add(r netproxy.Record) {
	line := netLine(r)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines[l.next] = line
	l.next = (l.next + 1) % logLines
	l.total++
}

func netLine(r netproxy.Record) string {
	what := "allowed"
	switch {
	case !r.Allowed:
		what = "refused: " + printable.Clean(r.Reason, logReasonMax)
	case r.Error != "":
		what = "allowed, failed: " + printable.Clean(r.Error, logReasonMax)
	}
	method := printable.Clean(r.Method, 16)
	if method == "" {
		method = "-"
	}
	target := net.JoinHostPort(printable.Clean(r.Host, state.MaxRecordHost), strconv.Itoa(r.Port))
	return fmt.Sprintf("%s %s %s %s (%d B in, %d B out, %d ms)", r.Start.UTC().Format(time.RFC3339), method, target, what,
		r.BytesIn, r.BytesOut, r.Duration.Milliseconds())
}

// String is the lines, oldest first, under a heading that says how many
// connections there were; "" when there were none.
func (l *Log) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total == 0 {
		return ""
	}
	var b strings.Builder
	n := int(min(l.total, logLines))
	if l.total > logLines {
		fmt.Fprintf(&b, "=== network: the last %d of %d connections\n", n, l.total)
	} else {
		fmt.Fprintf(&b, "=== network: %d connections\n", n)
	}
	for i := range n {
		b.WriteString(l.lines[(l.next-n+i+logLines)%logLines])
		b.WriteByte('\n')
	}
	return b.String()
}
