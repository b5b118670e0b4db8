package state

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/gofrs/flock"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// ServerInfo is what a live server says of itself, for the window's list
// of the servers running now: servers/<owner>.json beside its lock file,
// written after it took the lock and removed with the lock file (by the
// server when it stops, by whoever proves it gone: its watchdog, a
// reaper). It holds nothing secret. Everything in it is the server's own
// word, and its client names are what clients called themselves: a
// reader shows it as text, never trusts it.
type ServerInfo struct {
	Owner string `json:"owner"`
	PID   int    `json:"pid"`
	// Clients are the names of the clients that initialized a session
	// (one for stdio; HTTP serves several), in order of arrival.
	Clients   []string  `json:"clients,omitempty"`
	StartedAt time.Time `json:"started_at"`
	// Transport is "stdio" or "http".
	Transport string `json:"transport,omitempty"`
	Version   string `json:"version,omitempty"`
}

// maxServerInfo bounds what RunningServers reads of one file.
const maxServerInfo = 64 << 10

func (s *Store) serverInfoPath(owner string) (string, error) {
	p, err := s.serverLockPath(owner)
	if err != nil {
		return "", err
	}
	return strings.TrimSuffix(p, ".lock") + ".json", nil
}

// WriteServerInfo writes (or rewrites) what the server info.Owner says of
// itself. Only the server holding that owner's lock calls it.
func (s *Store) WriteServerInfo(info ServerInfo) error {
	p, err := s.serverInfoPath(info.Owner)
	if err != nil {
		return err
	}
	data, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(p, append(data, '\n'), 0o600)
}

// RunningServers returns what the servers running now say of themselves,
// oldest first: the info files whose owner's lock is held. A file left by
// a server that is gone (its lock free, or its lock file gone) is not
// returned, nor is one that is not valid JSON naming its own owner.
func (s *Store) RunningServers() ([]ServerInfo, error) {
	dir := filepath.Join(s.dir, "servers")
	ents, err := os.ReadDir(dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("list servers: %w", err)
	}
	var out []ServerInfo
	for _, e := range ents {
		owner, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || !e.Type().IsRegular() || !s.serverHeld(owner) {
			continue
		}
		info, err := s.readServerInfo(owner)
		if err != nil || info.Owner != owner {
			continue
		}
		out = append(out, info)
	}
	slices.SortFunc(out, func(a, b ServerInfo) int { return a.StartedAt.Compare(b.StartedAt) })
	return out, nil
}

func (s *Store) readServerInfo(owner string) (ServerInfo, error) {
	var info ServerInfo
	p, err := s.serverInfoPath(owner)
	if err != nil {
		return info, err
	}
	f, err := os.Open(p)
	if err != nil {
		return info, err
	}
	defer f.Close()
	dec := json.NewDecoder(io.LimitReader(f, maxServerInfo))
	err = dec.Decode(&info)
	return info, err
}

// serverHeld reports whether the lock of server owner is held by someone
// (its server). A file that cannot be opened is not held. The lock is
// tried, never kept: a server takes its lock before it writes its info
// file, so this never stands in the way of one starting.
func (s *Store) serverHeld(owner string) bool {
	p, err := s.serverLockPath(owner)
	if err != nil {
		return false
	}
	fl := flock.New(p, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryLock()
	if err != nil {
		return false
	}
	if ok {
		_ = fl.Unlock()
		return false
	}
	return true
}
