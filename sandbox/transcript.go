package sandbox

import (
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// transcript is the record of what ran in a sandbox, served as the
// sandbox://{id}/logs resource. It keeps the newest entries within a byte
// budget.
type transcript struct {
	mu      sync.Mutex
	entries []string
	size    int
	dropped int
	// notify, when set, is called after each entry (outside mu): the
	// engine writes the transcript to the state directory then (see
	// recorder.go), for the window, which is another process.
	notify func()
}

const (
	transcriptMax      = state.TranscriptMax
	transcriptFieldMax = 4 << 10
)

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + fmt.Sprintf("\n[... %d bytes omitted ...]\n", len(s)-n) + s[len(s)-n/2:]
}

// add appends an entry: what ran (kind and input) and how it ended.
func (t *transcript) add(kind, input string, res *ExecResult, note string) {
	var b strings.Builder
	fmt.Fprintf(&b, "=== %s %s\n", time.Now().UTC().Format(time.RFC3339), kind)
	if input != "" {
		b.WriteString(clip(input, transcriptFieldMax))
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
			b.WriteString("--- stdout\n" + clip(res.Stdout, transcriptFieldMax) + "\n")
		}
		if res.Stderr != "" {
			b.WriteString("--- stderr\n" + clip(res.Stderr, transcriptFieldMax) + "\n")
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

// watch sets f to be called after each entry, unless one is set already.
func (t *transcript) watch(f func()) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.notify == nil {
		t.notify = f
	}
}

// String renders the transcript, oldest first.
func (t *transcript) String() string {
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
