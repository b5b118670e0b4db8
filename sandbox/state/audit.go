package state

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"time"
)

// AuditEntry is one line of the audit log: a tool call, as the tray's
// Activity tab shows it.
type AuditEntry struct {
	Time       time.Time `json:"time"`
	Client     string    `json:"client,omitempty"`
	Tool       string    `json:"tool"`
	SandboxID  string    `json:"sandbox_id,omitempty"`
	Summary    string    `json:"summary"`
	ExitCode   *int      `json:"exit_code,omitempty"`
	DurationMS int64     `json:"duration_ms"`
	Error      bool      `json:"error,omitempty"`
	// TimedOut and OOMKilled say how a command the call ran ended.
	TimedOut  bool `json:"timed_out,omitempty"`
	OOMKilled bool `json:"oom_killed,omitempty"`
	// ErrorText is what a failed call answered (cleaned, capped), for
	// the window's view of the call.
	ErrorText string `json:"error_text,omitempty"`
	// Output is what a call that ran a command answered (cleaned,
	// capped), for the window's view of the call.
	Output string `json:"output,omitempty"`
	// Cancelled says the client cancelled the call (or left) before it
	// was answered.
	Cancelled bool `json:"cancelled,omitempty"`
	PID       int  `json:"pid"`
	// Network is set on a proxied connection's entry (Tool "network").
	Network *NetworkAudit `json:"network,omitempty"`
}

// Failed says whether the call failed, or a command it ran was killed
// for its time or memory: what the tray raises its badge for.
func (e AuditEntry) Failed() bool { return e.Error || e.TimedOut || e.OOMKilled }

// auditMax is the size at which the audit log is rotated to audit.jsonl.1.
const auditMax = 4 << 20

// auditMu serialises this process's audit writes and guards auditOpen.
var auditMu sync.Mutex

// auditOpen is the audit log this process last wrote, kept open between
// entries: opening and closing it for each was about half of an entry's
// cost between calls here (50 against 23 µs). Each write first checks that
// the path still names this very file (another server may have rotated
// it, or a person removed it), and opens the path again when it does not.
// Not on Windows, where a file held open cannot be renamed by the server
// that rotates it.
var auditOpen struct {
	path string
	f    *os.File
	id   os.FileInfo
}

const keepAuditOpen = runtime.GOOS != "windows"

func (s *Store) auditPath() string { return filepath.Join(s.dir, "audit.jsonl") }

// Audit appends e to the audit log. Each entry is one write of one line to a
// file opened for appending, so lines from several server processes do not
// interleave.
func (s *Store) Audit(e AuditEntry) error {
	if e.Time.IsZero() {
		e.Time = time.Now()
	}
	if e.PID == 0 {
		e.PID = os.Getpid()
	}
	if len(e.Summary) > 300 {
		e.Summary = e.Summary[:297] + "..."
	}
	line, err := json.Marshal(e)
	if err != nil {
		return err
	}
	line = append(line, '\n')
	auditMu.Lock()
	defer auditMu.Unlock()
	p := s.auditPath()
	st, err := os.Stat(p)
	if err == nil && st.Size() > auditMax {
		_ = os.Rename(p, p+".1")
		st = nil
	}
	f := auditOpen.f
	if f == nil || auditOpen.path != p || st == nil || !os.SameFile(st, auditOpen.id) {
		closeAudit()
		if f, err = os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err != nil {
			return fmt.Errorf("audit: %w", err)
		}
		if id, serr := f.Stat(); keepAuditOpen && serr == nil {
			auditOpen.path, auditOpen.f, auditOpen.id = p, f, id
		} else {
			defer f.Close()
		}
	}
	if _, err := f.Write(line); err != nil {
		closeAudit()
		return fmt.Errorf("audit: %w", err)
	}
	return nil
}

// closeAudit closes the audit log kept open, if any. auditMu is held.
func closeAudit() {
	if auditOpen.f != nil {
		_ = auditOpen.f.Close()
	}
	auditOpen.path, auditOpen.f, auditOpen.id = "", nil, nil
}

// ReadAudit returns up to limit entries, newest first.
func (s *Store) ReadAudit(limit int) ([]AuditEntry, error) {
	var all []AuditEntry
	for _, p := range []string{s.auditPath() + ".1", s.auditPath()} {
		f, err := os.Open(p)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("read audit: %w", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			var e AuditEntry
			if json.Unmarshal(sc.Bytes(), &e) == nil {
				all = append(all, e)
			}
		}
		f.Close()
	}
	out := make([]AuditEntry, 0, min(limit, len(all)))
	for i := len(all) - 1; i >= 0 && (limit <= 0 || len(out) < limit); i-- {
		out = append(out, all[i])
	}
	return out, nil
}

// NetworkAudit is one connection an allowlist sandbox's proxy carried or
// refused (Tool "network").
type NetworkAudit struct {
	Method   string `json:"method,omitempty"`
	Host     string `json:"host"`
	Port     int    `json:"port"`
	Allowed  bool   `json:"allowed"`
	Reason   string `json:"reason,omitempty"`
	Error    string `json:"error,omitempty"`
	Status   int    `json:"status,omitempty"`
	BytesIn  int64  `json:"bytes_in"`
	BytesOut int64  `json:"bytes_out"`
}
