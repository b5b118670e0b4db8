package state

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestRunningServers: the info file of a server whose lock is held is
// listed; a stale one (its lock free, or no lock file at all), a
// malformed one and one naming another owner are not; Release and a
// reaper's ServerGone remove the info file with the lock file.
func TestRunningServers(t *testing.T) {
	s, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	live := []*ServerLock{}
	for i, owner := range []string{"live-b", "live-a"} {
		l, err := s.LockServer(owner)
		if err != nil {
			t.Fatal(err)
		}
		live = append(live, l)
		info := ServerInfo{Owner: owner, PID: 100 + i, Clients: []string{"claude-ai"}, StartedAt: started.Add(-time.Duration(i) * time.Minute), Transport: "stdio", Version: "1.2.3"}
		if err := s.WriteServerInfo(info); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(s.Dir(), "servers")
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("dead.lock", "")                                                             // its server was killed: the lock is free
	write("dead.json", `{"owner":"dead","pid":7,"started_at":"2026-05-01T11:00:00Z"}`) // left behind
	write("nolock.json", `{"owner":"nolock","pid":8}`)
	l, err := s.LockServer("liar")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	write("liar.json", `{"owner":"live-a","pid":9}`)
	g, err := s.LockServer("garbled")
	if err != nil {
		t.Fatal(err)
	}
	defer g.Release()
	write("garbled.json", `{"owner":"garbled", "pid": `)

	got, err := s.RunningServers()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Owner != "live-a" || got[1].Owner != "live-b" || got[0].PID != 101 || got[0].Clients[0] != "claude-ai" || got[0].Transport != "stdio" {
		t.Fatalf("running servers %+v, want live-a then live-b", got)
	}

	if err := live[0].Release(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "live-b.json")); !os.IsNotExist(err) {
		t.Errorf("Release left the info file: %v", err)
	}
	if !s.ServerGone("dead") {
		t.Fatal("a free lock is not proof the server is gone")
	}
	if _, err := os.Stat(filepath.Join(dir, "dead.json")); !os.IsNotExist(err) {
		t.Errorf("ServerGone left the info file: %v", err)
	}
	if got, _ := s.RunningServers(); len(got) != 1 || got[0].Owner != "live-a" {
		t.Errorf("after one stopped: %+v", got)
	}
	if s.ServerGone("live-a") {
		t.Error("a held lock taken for a gone server")
	}
	live[1].Release()
}
