package record

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// recordDelay is how long a sandbox's state record may lag behind: every
// call updates last-used and expiry, but records (fsynced files) are
// written off the call's path, coalesced: recordSettle after the update
// when none was written for a delay, else once a delay has passed since
// the last write.
const recordDelay = time.Second

// recordSettle is the least time between an update and its write. A call
// updates its sandbox's record as it begins, and a write at once (with
// its fsyncs) ran beside the call: here a sandbox_exec true after a few
// idle seconds took 2.4 ms with it and 1.9 ms without. Most calls an
// assistant makes end well within it.
const recordSettle = 100 * time.Millisecond

// Recorder writes state records in the background, coalescing updates.
// A record removed with Remove is never written again, even by a write
// that was already pending.
type Recorder struct {
	st  *state.Store
	log *slog.Logger

	mu      sync.Mutex
	pending map[string]state.Record
	// logs holds the transcripts changed since the last flush.
	logs    map[string]*Transcript
	removed map[string]bool
	timer   *time.Timer
	last    time.Time // when the last flush began

	io sync.Mutex // serialises file writes and removals
}

// New returns a recorder writing to st (nil: writes nothing).
func New(st *state.Store, log *slog.Logger) *Recorder {
	return &Recorder{st: st, log: log, pending: map[string]state.Record{}, logs: map[string]*Transcript{}, removed: map[string]bool{}}
}

// Put schedules r to be written.
func (rc *Recorder) Put(r state.Record) {
	if rc.st == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.removed[r.ID] {
		return
	}
	rc.pending[r.ID] = r
	rc.schedule()
}

// PutLog schedules sandbox id's transcript t to be written to its file.
func (rc *Recorder) PutLog(id string, t *Transcript) {
	if rc.st == nil {
		return
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if rc.removed[id] {
		return
	}
	rc.logs[id] = t
	rc.schedule()
}

// schedule starts the flush timer unless it runs; rc.mu is held.
func (rc *Recorder) schedule() {
	if rc.timer == nil {
		rc.timer = time.AfterFunc(max(recordSettle, time.Until(rc.last.Add(recordDelay))), rc.Flush)
	}
}

// Remove deletes a sandbox's record and forgets what was pending for it.
func (rc *Recorder) Remove(id string) {
	if rc.st == nil {
		return
	}
	rc.mu.Lock()
	delete(rc.pending, id)
	delete(rc.logs, id)
	rc.removed[id] = true
	rc.mu.Unlock()
	rc.io.Lock()
	defer rc.io.Unlock()
	_ = rc.st.RemoveRecord(id)
}

// Flush writes what is pending now.
func (rc *Recorder) Flush() {
	rc.mu.Lock()
	batch, logs := rc.pending, rc.logs
	rc.pending, rc.logs = map[string]state.Record{}, map[string]*Transcript{}
	if rc.timer != nil {
		rc.timer.Stop()
		rc.timer = nil
	}
	rc.last = time.Now()
	rc.mu.Unlock()
	if len(batch) == 0 && len(logs) == 0 {
		return
	}
	rc.io.Lock()
	defer rc.io.Unlock()
	for id, r := range batch {
		if rc.gone(id) {
			continue
		}
		if err := rc.st.WriteRecord(r); err != nil {
			rc.log.Warn("write sandbox record", "id", id, "err", err)
		}
	}
	for id, t := range logs {
		if rc.gone(id) {
			continue
		}
		if err := rc.st.WriteTranscript(id, t.String()); err != nil {
			rc.log.Warn("write sandbox transcript", "id", id, "err", err)
		}
	}
}

// gone reports whether sandbox id's record was removed.
func (rc *Recorder) gone(id string) bool {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return rc.removed[id]
}

// Transcript is the record of what ran in a sandbox, served as the
// sandbox://{id}/logs resource. It keeps the newest entries within a byte
// budget.
type Transcript struct {
	mu      sync.Mutex
	entries []string
	size    int
	dropped int
	// notify, when set, is called after each entry (outside mu): the
	// engine writes the transcript to the state directory then, for the
	// window, which is another process.
	notify func()
}

const transcriptMax = state.TranscriptMax

// FieldMax bounds each field (input, stdout, stderr) of an entry.
const FieldMax = 4 << 10

// Clip keeps s's first and last n/2 bytes when it is longer than n.
func Clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n[... %d bytes omitted ...]\n", len(s)-n) + s[len(s)-n/2:]
}

// Result is how a command in an entry ended.
type Result struct {
	ExitCode                       int
	DurationMS                     int64
	TimedOut, OOMKilled, Truncated bool
	Stdout, Stderr                 string
}

// Add appends an entry: what ran (kind and input) and how it ended (res,
// nil for none) with a note.
func (t *Transcript) Add(kind, input string, res *Result, note string) {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s %s\n", time.Now().UTC().Format(time.RFC3339), kind)
	if input != "" {
		b.WriteString(Clip(input, FieldMax))
		if !strings.HasSuffix(input, "\n") {
			b.WriteByte('\n')
		}
	}
	if res != nil {
		fmt.Fprintf(&b, "--- exit_code=%d duration_ms=%d", res.ExitCode, res.DurationMS)
		if res.TimedOut {
			b.WriteString(" timed_out")
		}
		if res.OOMKilled {
			b.WriteString(" oom_killed")
		}
		if res.Truncated {
			b.WriteString(" truncated")
		}
		b.WriteByte('\n')
		if res.Stdout != "" {
			b.WriteString("--- stdout\n" + Clip(res.Stdout, FieldMax) + "\n")
		}
		if res.Stderr != "" {
			b.WriteString("--- stderr\n" + Clip(res.Stderr, FieldMax) + "\n")
		}
	}
	if note != "" {
		b.WriteString("--- " + note + "\n")
	}
	e := b.String()
	t.mu.Lock()
	t.entries = append(t.entries, e)
	t.size += len(e)
	for t.size > transcriptMax && len(t.entries) > 1 {
		t.size -= len(t.entries[0])
		t.entries = t.entries[1:]
		t.dropped++
	}
	notify := t.notify
	t.mu.Unlock()
	if notify != nil {
		notify()
	}
}

// Watch sets f to be called after each entry, unless one is set already.
func (t *Transcript) Watch(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.notify == nil {
		t.notify = f
	}
}

// String renders the transcript, oldest first.
func (t *Transcript) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var b strings.Builder
	if t.dropped > 0 {
		fmt.Fprintf(&b, "[%d older entries dropped]\n", t.dropped)
	}
	for _, e := range t.entries {
		b.WriteString(e)
	}
	return b.String()
}
