package firstrun

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/app/clientconfig"
	"github.com/mcp-sandbox/mcp-sandbox/app/installplace"
)

func env(home string) clientconfig.Env {
	vars := map[string]string{"HOME": home, "PATH": ""}
	return clientconfig.Env{GOOS: "linux", Getenv: func(k string) string { return vars[k] }}
}

func TestFirstRunConfiguresInstalledClients(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	// Claude Desktop is installed and has a config of its own; Cursor is not.
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(claude), 0o700)
	before := `{"mcpServers": {"other": {"command": "x"}}, "theme": "dark"}`
	os.WriteFile(claude, []byte(before), 0o600)

	o := Options{Env: env(home), Command: "/opt/mcp/mcp-sandbox", DockerHost: "unix:///var/run/docker.sock", StateDir: state}
	rep, err := Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Configured) != 1 || rep.Configured[0].Client != "claude" || rep.Configured[0].Backup == "" {
		t.Fatalf("Configured = %+v; want claude with a backup", rep.Configured)
	}
	if strings.Join(rep.Skipped, ",") != "cursor" {
		t.Errorf("Skipped = %v, want cursor", rep.Skipped)
	}
	if msg := rep.Message(); !strings.Contains(msg, "Restart Claude Desktop to load it") {
		t.Errorf("Message = %q", msg)
	}
	var got struct {
		MCPServers map[string]struct {
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"mcpServers"`
		Theme string `json:"theme"`
	}
	data, _ := os.ReadFile(claude)
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	e := got.MCPServers["mcp-sandbox"]
	if e.Command != o.Command || strings.Join(e.Args, " ") != "serve" || e.Env["DOCKER_HOST"] != o.DockerHost {
		t.Errorf("entry = %+v", e)
	}
	if got.Theme != "dark" || got.MCPServers["other"].Command != "x" {
		t.Errorf("the rest of the file was not kept: %s", data)
	}
	if b, _ := os.ReadFile(rep.Configured[0].Backup); string(b) != before {
		t.Errorf("backup = %q", b)
	}

	// The second start does nothing, even when Cursor appeared meanwhile.
	os.MkdirAll(filepath.Join(home, ".cursor"), 0o700)
	rep, err = Run(context.Background(), o)
	if err != nil || !rep.AlreadyDone || rep.Message() != "" {
		t.Fatalf("second Run = %+v, %v; want AlreadyDone and no message", rep, err)
	}
	if _, err := os.Stat(filepath.Join(home, ".cursor", "mcp.json")); err == nil {
		t.Error("the second run configured Cursor")
	}
}

func TestFirstRunLeavesABrokenConfig(t *testing.T) {
	home := t.TempDir()
	cursor := filepath.Join(home, ".cursor", "mcp.json")
	os.MkdirAll(filepath.Dir(cursor), 0o700)
	os.WriteFile(cursor, []byte(`{"mcpServers": {`), 0o600)
	rep, err := Run(context.Background(), Options{Env: env(home), Command: "/opt/mcp-sandbox", StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !errors.Is(rep.Failed["cursor"], clientconfig.ErrParse) {
		t.Fatalf("Failed = %v; want cursor's parse error", rep.Failed)
	}
	if b, _ := os.ReadFile(cursor); string(b) != `{"mcpServers": {` {
		t.Errorf("broken file changed: %q", b)
	}
	if msg := rep.Message(); !strings.Contains(msg, "Cursor was not set up") {
		t.Errorf("Message = %q", msg)
	}
}

func TestFirstRunWithNothingInstalled(t *testing.T) {
	rep, err := Run(context.Background(), Options{Env: env(t.TempDir()), Command: "/x/mcp-sandbox", StateDir: t.TempDir()})
	if err != nil || len(rep.Configured) != 0 || rep.Message() != "" {
		t.Errorf("Run = %+v, %v; want nothing done, no message", rep, err)
	}
}

// TestFirstRunWaitsForAPlaceToStay: started from the disk image or an App
// Translocation copy, the first run writes nothing (no client entry, no
// marker) and says to move the app; the next start, from Applications,
// does the first run.
func TestFirstRunWaitsForAPlaceToStay(t *testing.T) {
	home := t.TempDir()
	state := filepath.Join(home, "state")
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	os.MkdirAll(filepath.Dir(claude), 0o700)
	os.WriteFile(claude, []byte("{}\n"), 0o600)
	for _, exe := range []string{
		"/Volumes/MCP Sandbox/MCP Sandbox.app/Contents/MacOS/mcp-sandbox",
		"/private/var/folders/x5/k9/T/AppTranslocation/5C1F0E2A/d/MCP Sandbox.app/Contents/MacOS/mcp-sandbox",
	} {
		place := installplace.Of("darwin", exe, true)
		rep, err := Run(context.Background(), Options{Env: env(home), Command: exe, StateDir: state, Place: place})
		if err != nil || rep.NotHere == nil || *rep.NotHere != place || len(rep.Configured) != 0 {
			t.Fatalf("Run from %s = %+v, %v", exe, rep, err)
		}
		if msg := rep.Message(); !strings.Contains(msg, "Move it to Applications first") || !strings.Contains(msg, "No AI client was set up yet") {
			t.Errorf("Message = %q", msg)
		}
		if b, _ := os.ReadFile(claude); string(b) != "{}\n" {
			t.Errorf("claude's config written from %s:\n%s", exe, b)
		}
		if _, err := os.Stat(state); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("state dir made from %s: %v", exe, err)
		}
	}
	exe := "/Applications/MCP Sandbox.app/Contents/MacOS/mcp-sandbox"
	rep, err := Run(context.Background(), Options{Env: env(home), Command: exe, StateDir: state, Place: installplace.Of("darwin", exe, false)})
	if err != nil || rep.NotHere != nil || len(rep.Configured) != 1 {
		t.Fatalf("Run from Applications = %+v, %v", rep, err)
	}
}

// The first-run message says a config was backed up only for the clients
// whose file existed.
func TestMessageMentionsOnlyBackupsMade(t *testing.T) {
	for _, tc := range []struct {
		name       string
		configured []Configured
		want, not  string
	}{
		{"no file before", []Configured{{Display: "Claude Desktop"}}, "set up in Claude Desktop. Restart", "backed up"},
		{"a file before", []Configured{{Display: "Cursor", Backup: "/b"}}, "set up in Cursor (the old config was backed up)", ""},
		{"one of two", []Configured{{Display: "Claude Desktop"}, {Display: "Cursor", Backup: "/b"}}, "(the old config of Cursor was backed up)", "configs were"},
		{"both", []Configured{{Display: "Claude Desktop", Backup: "/a"}, {Display: "Cursor", Backup: "/b"}}, "(the old configs were backed up)", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := Report{Configured: tc.configured}.Message()
			if !strings.Contains(msg, tc.want) || (tc.not != "" && strings.Contains(msg, tc.not)) {
				t.Errorf("Message = %q; want %q and not %q", msg, tc.want, tc.not)
			}
		})
	}
}
