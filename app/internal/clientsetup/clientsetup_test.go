package clientsetup

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
)

// Configure writes the entry and says so, replaces an entry for another
// server (keeping the old file, which the message names), answers "already
// set up" when nothing changes, and refuses a client it does not know.
func TestConfigure(t *testing.T) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil { // Cursor has run once
		t.Fatal(err)
	}
	env := clientconfig.Env{GOOS: "linux", Getenv: func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	}}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	ctx := context.Background()
	cfgFile := filepath.Join(home, ".cursor", "mcp.json")

	steps := []struct {
		name, command string
		want          []string
		backup        bool
	}{
		{"new entry", "/opt/old/mcp-sandbox", []string{"Set up Cursor in " + cfgFile, "Restart Cursor to load it."}, false},
		{"another server", "/opt/new/mcp-sandbox", []string{"Set up Cursor in " + cfgFile + " (the old file is kept as mcp.json.", ".bak). Restart Cursor to load it."}, true},
		{"unchanged", "/opt/new/mcp-sandbox", []string{"Cursor was already set up in " + cfgFile + "."}, false},
	}
	for _, s := range steps {
		msg, err := Configure(ctx, "cursor", clientconfig.InstallOptions{Env: env, Command: s.command}, log)
		if err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		for _, w := range s.want {
			if !strings.Contains(msg, w) {
				t.Errorf("%s: message %q, want it to contain %q", s.name, msg, w)
			}
		}
		if got := strings.Contains(msg, "kept as"); got != s.backup {
			t.Errorf("%s: message %q names a backup: %v, want %v", s.name, msg, got, s.backup)
		}
		b, err := os.ReadFile(cfgFile)
		if err != nil || !strings.Contains(string(b), s.command) {
			t.Errorf("%s: %s holds %q (%v), want the command %s", s.name, cfgFile, b, err, s.command)
		}
	}
	if _, err := Configure(ctx, "no-such-client", clientconfig.InstallOptions{Env: env, Command: "/x"}, log); !errors.Is(err, clientconfig.ErrUnknownClient) {
		t.Errorf("unknown client: %v, want ErrUnknownClient", err)
	}
}
