package state

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

func openStore(t *testing.T) *Store {
	t.Helper()
	st, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// TestInstallationIDOnce: every store on one directory, opened at once,
// agrees on one id, and it stays the same.
func TestInstallationIDOnce(t *testing.T) {
	dir := t.TempDir()
	var wg sync.WaitGroup
	ids := make([]string, 16)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := Open(dir)
			if err != nil {
				t.Error(err)
				return
			}
			id, err := st.InstallationID()
			if err != nil {
				t.Error(err)
			}
			ids[i] = id
		}()
	}
	wg.Wait()
	for _, id := range ids {
		if id != ids[0] || !validInstallation.MatchString(id) {
			t.Fatalf("ids %v: want one valid id", ids)
		}
	}
	st, _ := Open(dir)
	if again, err := st.InstallationID(); err != nil || again != ids[0] {
		t.Errorf("reopened: %q, %v; want %q", again, err, ids[0])
	}
	if left, _ := filepath.Glob(filepath.Join(dir, ".installation-id.tmp-*")); len(left) > 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

func TestInstallationIDMalformed(t *testing.T) {
	st := openStore(t)
	if err := os.WriteFile(filepath.Join(st.Dir(), installationFile), []byte("not an id\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if id, err := st.InstallationID(); err == nil {
		t.Errorf("malformed file gave id %q, want an error", id)
	}
}

// TestServerGone is the liveness rule: a held lock is life, a free or
// missing one is death, and nothing else is proof of either.
func TestServerGone(t *testing.T) {
	st := openStore(t)
	lock, err := st.LockServer("live1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.LockServer("live1"); err == nil {
		t.Error("a second LockServer of a held owner succeeded")
	}
	gone, err := st.LockServer("gone1")
	if err != nil {
		t.Fatal(err)
	}
	// A server that died without Release: its file stays, unlocked.
	_ = gone.fl.Unlock()
	tests := []struct {
		name  string
		owner string
		want  bool
	}{
		{"lock held", "live1", false},
		{"lock file left unlocked", "gone1", true},
		{"no lock file", "never1", true},
		{"owner id that names no file", "../live1", false},
		{"empty owner", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := st.ServerGone(tt.owner); got != tt.want {
				t.Errorf("ServerGone(%q) = %v, want %v", tt.owner, got, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "servers", "gone1.lock")); !os.IsNotExist(err) {
		t.Errorf("a gone server's lock file is still there: %v", err)
	}
	if _, err := os.Stat(filepath.Join(st.Dir(), "servers", "never1.lock")); !os.IsNotExist(err) {
		t.Errorf("ServerGone created a lock file: %v", err)
	}
	if err := lock.Release(); err != nil {
		t.Fatal(err)
	}
	if !st.ServerGone("live1") {
		t.Error("a released server is not gone")
	}
}

// TestServerGoneAfterKill: the lock of a process killed with SIGKILL is
// free, with no clean-up by that process.
func TestServerGoneAfterKill(t *testing.T) {
	if dir := os.Getenv("STATE_TEST_HOLD_LOCK"); dir != "" {
		st, err := Open(dir)
		if err != nil {
			os.Exit(3)
		}
		if _, err := st.LockServer("child1"); err != nil {
			os.Exit(4)
		}
		os.Stdout.WriteString("locked\n")
		select {}
	}
	st := openStore(t)
	cmd := exec.Command(os.Args[0], "-test.run=^TestServerGoneAfterKill$")
	cmd.Env = append(os.Environ(), "STATE_TEST_HOLD_LOCK="+st.Dir())
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if line, _ := bufio.NewReader(out).ReadString('\n'); line != "locked\n" {
		_ = cmd.Process.Kill()
		t.Fatalf("child said %q", line)
	}
	if st.ServerGone("child1") {
		t.Error("the live child's server is gone")
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	if !st.ServerGone("child1") {
		t.Error("the killed child's server is not gone")
	}
}
