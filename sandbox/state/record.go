package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// Record is what the owning server knows of a sandbox beyond its labels,
// which are fixed at creation: whether a pooled sandbox was claimed, by which
// client, and when it now expires.
type Record struct {
	ID          string    `json:"sandbox_id"`
	ContainerID string    `json:"container_id"`
	Owner       string    `json:"owner"`
	OwnerPID    int       `json:"owner_pid"`
	Client      string    `json:"client,omitempty"`
	Language    string    `json:"language"`
	Image       string    `json:"image"`
	Network     string    `json:"network"`
	Claimed     bool      `json:"claimed"`
	CreatedAt   time.Time `json:"created_at"`
	ExpiresAt   time.Time `json:"expires_at"`
	LastUsed    time.Time `json:"last_used"`
	// Busy is set while a call runs in the sandbox: a reaper never
	// expires it then, however long ago it was last used.
	Busy bool `json:"busy,omitempty"`
	// Exposed lists the sandbox's previews (sandbox_expose), by port, at
	// most MaxPreviews; the window offers to open them.
	Exposed []Preview `json:"exposed,omitempty"`
	// Traffic is an allowlist sandbox's network summary (its proxy's
	// counters), bounded (NetworkSummary.Bounded); nil for the other
	// modes and before its proxy first started.
	Traffic *NetworkSummary `json:"traffic,omitempty"`
}

// MaxPreviews bounds the previews a record lists (and a sandbox may have).
const MaxPreviews = 16

// Preview is one exposed port of a sandbox: Port on its loopback is
// reached at http://127.0.0.1:HostPort/ on the host.
type Preview struct {
	Port     int `json:"port"`
	HostPort int `json:"host_port"`
}

// URL is where the preview is reached, or "" when either port is out of
// range (a record is a file on disk: its numbers are checked, and the
// URL is never read from it).
func (p Preview) URL() string {
	if p.Port < 1 || p.Port > 65535 || p.HostPort < 1 || p.HostPort > 65535 {
		return ""
	}
	return "http://127.0.0.1:" + strconv.Itoa(p.HostPort) + "/"
}

var validID = regexp.MustCompile(`^[a-z0-9]{4,32}$`)

// ErrNoRecord is returned when a sandbox has no record.
var ErrNoRecord = errors.New("no record")

func (s *Store) recordPath(id string) (string, error) {
	if !validID.MatchString(id) {
		return "", fmt.Errorf("record %q: invalid sandbox id", id)
	}
	return filepath.Join(s.dir, "sandboxes", id+".json"), nil
}

// WriteRecord stores r atomically.
func (s *Store) WriteRecord(r Record) error {
	p, err := s.recordPath(r.ID)
	if err != nil {
		return err
	}
	r.Traffic = r.Traffic.Bounded()
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(p, append(data, '\n'), 0o600)
}

// ReadRecord returns the record of sandbox id, or ErrNoRecord.
func (s *Store) ReadRecord(id string) (Record, error) {
	var r Record
	p, err := s.recordPath(id)
	if err != nil {
		return r, err
	}
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return r, fmt.Errorf("sandbox %s: %w", id, ErrNoRecord)
	}
	if err != nil {
		return r, fmt.Errorf("read record: %w", err)
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return r, fmt.Errorf("read record %s: %w", p, err)
	}
	r.Traffic = r.Traffic.Bounded()
	return r, nil
}

// RemoveRecord deletes the record of sandbox id and its transcript file;
// missing ones are fine. Every path that forgets a sandbox (its server's
// stop and expiry, a reaper, a dead server's watchdog) comes through here.
func (s *Store) RemoveRecord(id string) error {
	p, err := s.recordPath(id)
	if err != nil {
		return err
	}
	terr := s.removeTranscript(id)
	if err := os.Remove(p); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("remove record: %w", err)
	}
	return terr
}

// Records returns every record (unreadable ones are skipped).
func (s *Store) Records() ([]Record, error) {
	ents, err := os.ReadDir(filepath.Join(s.dir, "sandboxes"))
	if err != nil {
		return nil, fmt.Errorf("list records: %w", err)
	}
	var out []Record
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !validID.MatchString(id) {
			continue
		}
		if r, err := s.ReadRecord(id); err == nil {
			out = append(out, r)
		}
	}
	return out, nil
}
