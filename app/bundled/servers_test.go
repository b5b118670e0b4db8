package bundled

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
)

// TestRunningServersOfRealBinary: two real servers, started as two clients
// start them, are listed as the servers running now (state.RunningServers,
// what the window shows), each with its pid, client and transport; one
// killed with SIGKILL leaves the list at once (its lock freed with it),
// and its info file goes with its watchdog's clean-up; the other, closed
// as a client closes it, leaves nothing either.
func TestRunningServersOfRealBinary(t *testing.T) {
	apptest.Docker(t, apptest.PythonImage)
	apptest.Home(t)
	bin := apptest.Binary(t, "mcp-sandbox")
	st, err := state.Open(config.StateDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var sessions []*Session
	for _, name := range []string{"claude-ai", "cursor-vscode"} {
		s, err := Connect(ctx, ConnectOptions{Path: bin, ClientName: name})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		sessions = append(sessions, s)
	}
	var running []state.ServerInfo
	waitUntil(t, "both servers listed with their clients", func() bool {
		running, err = st.RunningServers()
		if err != nil || len(running) != 2 {
			return false
		}
		var clients []string
		for _, r := range running {
			clients = append(clients, r.Clients...)
		}
		slices.Sort(clients)
		return slices.Equal(clients, []string{"claude-ai", "cursor-vscode"})
	})
	var victim state.ServerInfo
	for _, r := range running {
		if r.PID <= 0 || r.Transport != "stdio" || r.StartedAt.IsZero() || r.Version == "" {
			t.Errorf("server info %+v", r)
		}
		if r.Clients[0] == "claude-ai" {
			victim = r
		}
	}
	if err := syscall.Kill(victim.PID, syscall.SIGKILL); err != nil {
		t.Fatalf("kill the claude-ai server (pid %d): %v", victim.PID, err)
	}
	waitUntil(t, "the killed server to leave the list", func() bool {
		running, err = st.RunningServers()
		return err == nil && len(running) == 1 && running[0].Owner != victim.Owner
	})
	info := filepath.Join(st.Dir(), "servers", victim.Owner+".json")
	waitUntil(t, "the killed server's watchdog to remove its info file", func() bool {
		_, err := os.Stat(info)
		return os.IsNotExist(err)
	})
	left := running[0]
	for _, s := range sessions {
		s.Close()
	}
	waitUntil(t, "the closed server to remove its files", func() bool {
		_, err := os.Stat(filepath.Join(st.Dir(), "servers", left.Owner+".json"))
		return os.IsNotExist(err)
	})
	if running, _ := st.RunningServers(); len(running) != 0 {
		t.Errorf("servers still listed: %+v", running)
	}
}

// waitUntil polls ok for at most 30 s.
func waitUntil(t *testing.T, what string, ok func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !ok() {
		if time.Now().After(deadline) {
			t.Fatalf("no %s within 30 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
