package trayapp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/bundled"
	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/dirwatch"
	"github.com/mcp-sandbox/mcp-sandbox/app/internal/traywin"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/printable"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// burstGap is the quiet that ends a burst of failures: one notification
// per burst, not one per call.
const burstGap = time.Minute

// auditTailMax bounds what one change reads of the audit log: a burst
// larger than this is counted from its newest part.
const auditTailMax = 1 << 20

// alerts follows the audit log for failed calls (errors, timeouts, OOM
// kills) the servers append, raises the tray's badge and notifies once
// per burst. It reads only what was appended since it last looked.
type alerts struct {
	mu       sync.Mutex
	offset   int64     // how far audit.jsonl was read
	lastFail time.Time // the newest failure counted
	seen     time.Time // when the person last looked (the window, Activity)
}

// watchAudit follows audit.jsonl and traywin.ActivitySeenFile until ctx is done.
// Failures before the tray started do not count.
func (a *App) watchAudit(ctx context.Context) {
	path := filepath.Join(a.st.Dir(), "audit.jsonl")
	if fi, err := os.Stat(path); err == nil {
		a.alerts.offset = fi.Size()
	}
	a.alerts.seen = time.Now()
	err := dirwatch.Watch(ctx, a.st.Dir(), 200*time.Millisecond, a.auditChanged, "audit.jsonl", traywin.ActivitySeenFile)
	if err != nil {
		a.log.Warn("watch the audit log", "err", err)
	}
}

// auditChanged counts the failures appended since the last look, and
// clears the badge when the person has looked since.
func (a *App) auditChanged() {
	al := &a.alerts
	al.mu.Lock()
	defer al.mu.Unlock()
	if b, err := os.ReadFile(filepath.Join(a.st.Dir(), traywin.ActivitySeenFile)); err == nil {
		if t, err := time.Parse(time.RFC3339Nano, string(bytes.TrimSpace(b))); err == nil && t.After(al.seen) {
			al.seen = t
			a.update(func(s *trayState) { s.failed = 0 })
		}
	}
	entries, next := readAuditFrom(filepath.Join(a.st.Dir(), "audit.jsonl"), al.offset)
	al.offset = next
	n := 0
	var first *state.AuditEntry
	for i := range entries {
		e := &entries[i]
		end := e.Time.Add(time.Duration(e.DurationMS) * time.Millisecond)
		if !e.Failed() || !end.After(al.seen) || e.Client == bundled.TestClientName {
			continue
		}
		if al.lastFail.IsZero() || end.Sub(al.lastFail) > burstGap {
			first = e // a new burst
		}
		if end.After(al.lastFail) {
			al.lastFail = end
		}
		n++
	}
	if n == 0 {
		return
	}
	a.update(func(s *trayState) { s.failed += n })
	if first != nil {
		a.notify(failureNote(*first))
	}
}

// failureNote says what failed in plain words. Only the tool and the
// client's name go in: the summary holds what a client or a sandbox
// wrote.
func failureNote(e state.AuditEntry) string {
	what := "failed"
	switch {
	case e.OOMKilled:
		what = "was stopped: out of memory"
	case e.TimedOut:
		what = "was stopped: it ran out of time"
	}
	by := ""
	if c := printable.Clean(e.Client, printable.NameMax); c != "" {
		by = " from " + clientconfig.DisplayForMCPName(c)
	}
	return fmt.Sprintf("A %s call%s %s. Open MCP Sandbox ▸ Activity to see it (and any that follow).", printable.Clean(e.Tool, 40), by, what)
}

// readAuditFrom reads the entries appended to the audit log after offset
// and returns them with the offset to read from next time. A log shorter
// than offset was rotated: it is read from its start.
func readAuditFrom(path string, offset int64) ([]state.AuditEntry, int64) {
	f, err := os.Open(path)
	if err != nil {
		return nil, 0
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, offset
	}
	if fi.Size() < offset {
		offset = 0
	}
	if fi.Size()-offset > auditTailMax {
		offset = fi.Size() - auditTailMax
	}
	if _, err := f.Seek(offset, io.SeekStart); err != nil {
		return nil, offset
	}
	var out []state.AuditEntry
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			break // a partial last line is read next time, whole
		}
		offset += int64(len(line))
		var e state.AuditEntry
		if json.Unmarshal(line, &e) == nil {
			out = append(out, e)
		}
	}
	return out, offset
}
