package netglue

import (
	"fmt"
	"net"
	"strconv"
	"sync"
	"time"

	"golang.org/x/time/rate"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/netproxy"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// The audit lines one sandbox's network may write: a burst, then one per
// interval. A program that opens connections as fast as it can would
// otherwise fill the audit log (which keeps a bounded size) and push the
// record of every tool call out of it. What is not written is counted,
// and the next line written, or a last one when the sandbox's proxy
// closes, says how many; sandbox_list's counters count everything.
const (
	auditBurst = 64
	auditEvery = 10 * time.Second
)

// AuditBudget is one sandbox's allowance of network audit lines: a token
// bucket (golang.org/x/time/rate) and a count of the lines it refused. Its
// zero value is ready to use.
type AuditBudget struct {
	mu      sync.Mutex
	lim     *rate.Limiter
	dropped int
}

// Take reports whether a line may be written at now and, if so, how many
// were not written since the last one that was. A clock that goes back
// refills nothing.
func (b *AuditBudget) Take(now time.Time) (ok bool, dropped int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.lim == nil {
		b.lim = rate.NewLimiter(rate.Every(auditEvery), auditBurst)
	}
	if !b.lim.AllowN(now, 1) {
		b.dropped++
		return false, 0
	}
	dropped, b.dropped = b.dropped, 0
	return true, dropped
}

// Flush returns how many lines were not written and forgets them.
func (b *AuditBudget) Flush() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	d := b.dropped
	b.dropped = 0
	return d
}

// AuditEntry is the audit line of one proxied connection of sandbox id,
// made by client; dropped is what Take said.
func AuditEntry(r netproxy.Record, client, id string, dropped int) state.AuditEntry {
	what := "allowed"
	if !r.Allowed {
		what = "refused: " + r.Reason
	} else if r.Error != "" {
		what = "allowed, failed: " + r.Error
	}
	target := net.JoinHostPort(r.Host, strconv.Itoa(r.Port))
	n := &state.NetworkAudit{Host: r.Host, Port: r.Port, Method: r.Method, Allowed: r.Allowed, Reason: r.Reason,
		Error: r.Error, Status: r.Status, BytesIn: r.BytesIn, BytesOut: r.BytesOut}
	return state.AuditEntry{
		Time: r.Start, Client: client, Tool: "network", SandboxID: id,
		Summary:    fmt.Sprintf("%s %s %s (%d B in, %d B out)%s", r.Method, target, what, r.BytesIn, r.BytesOut, droppedNote(dropped)),
		DurationMS: r.Duration.Milliseconds(), Network: n,
	}
}

// ClosedEntry is the last audit line of sandbox id's proxy, at now: how
// many connections its budget kept out (Flush).
func ClosedEntry(now time.Time, client, id string, dropped int) state.AuditEntry {
	return state.AuditEntry{Time: now, Client: client, Tool: "network", SandboxID: id,
		Summary: "proxy closed" + droppedNote(dropped)}
}

func droppedNote(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %d connections before this were not logged (over %d at once, then one each %s)", n, auditBurst, auditEvery)
}

// Traffic is a sandbox's proxy counters (st, nil before its proxy first
// started) and allowed entries as its state record holds them (bounded
// there), or nil.
func Traffic(allowed []string, st *netproxy.Stats) *state.NetworkSummary {
	if st == nil {
		return nil
	}
	t := &state.NetworkSummary{
		Allowed: allowed, AllowedTotal: len(allowed),
		AllowedConns: st.Allowed, RefusedConns: st.Refused,
		BytesIn: st.BytesIn, BytesOut: st.BytesOut, Open: st.Open,
	}
	for _, h := range st.RefusedHosts[:min(len(st.RefusedHosts), state.MaxRecordRefused)] {
		t.Refused = append(t.Refused, state.HostHits{Host: h.Host, Count: h.Count})
	}
	return t.Bounded()
}
