package config

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A deny list written in the file adds to the defaults; only the explicit
// switch replaces them.
func TestDenyListsAddToDefaults(t *testing.T) {
	for _, tc := range []struct {
		name                string
		toml                string
		wantRead, wantWrite []string
	}{
		{"unset", "", DefaultReadDeny(), DefaultWriteDeny()},
		{"added", "[files]\nread_deny = [\"~/.vault\"]\nwrite_deny = [\"~/.config/helix\"]\n",
			append(DefaultReadDeny(), "~/.vault"), append(DefaultWriteDeny(), "~/.config/helix")},
		{"a default written again is not repeated", "[files]\nread_deny = [\"~/.ssh\", \"~/.vault\"]\n",
			append(DefaultReadDeny(), "~/.vault"), DefaultWriteDeny()},
		{"replaced", "[files]\nread_deny_replace = true\nread_deny = [\"~/.vault\"]\nwrite_deny_replace = true\nwrite_deny = []\n",
			[]string{"~/.vault"}, []string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Parse("config.toml", []byte(tc.toml))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.wantRead, c.Files.ReadDeny); diff != "" {
				t.Errorf("read_deny (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantWrite, c.Files.WriteDeny); diff != "" {
				t.Errorf("write_deny (-want +got):\n%s", diff)
			}
		})
	}
}

// The defaults name what the issue asks for, and the product's own places
// follow the environment.
func TestDefaultWriteDenyAndOwnPaths(t *testing.T) {
	for _, want := range []string{"~/.bashrc", "~/.profile", "~/.zshrc", "~/.ssh", "~/.gnupg", "~/.config/autostart",
		"~/Library/LaunchAgents", "~/AppData/Roaming/Microsoft/Windows/Start Menu/Programs/Startup", "~/.local/bin", "~/bin", "$PATH", "~/.cursor"} {
		if !slices.Contains(DefaultWriteDeny(), want) {
			t.Errorf("DefaultWriteDeny lacks %s", want)
		}
	}
	if runtime.GOOS != "linux" {
		t.Skip("XDG_CONFIG_HOME is read on Linux only")
	}
	t.Setenv("MCP_SANDBOX_CONFIG", "/x/config.toml")
	t.Setenv("MCP_SANDBOX_STATE_DIR", "/x/state")
	t.Setenv("XDG_CONFIG_HOME", "/x/cfg")
	want := []string{"/x/config.toml", "/x/cfg/mcp-sandbox", "/x/state"}
	if diff := cmp.Diff(want, OwnPaths()); diff != "" {
		t.Errorf("OwnPaths (-want +got):\n%s", diff)
	}
}

// Save writes a deny list as the file holds it, what it adds to the
// defaults, and the file read again has both.
func TestSaveWritesDenyAdditions(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	c := Default()
	c.Files.ReadDeny = DenyWith([]string{"~/secrets"}, DefaultReadDeny(), false)
	if _, err := Save(path, c); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `read_deny = ["~/secrets"]`) || strings.Contains(string(data), "~/.ssh") {
		t.Errorf("file:\n%s", data)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(got.Files.ReadDeny, "~/secrets") || !slices.Contains(got.Files.ReadDeny, "~/.ssh") {
		t.Errorf("read_deny = %v", got.Files.ReadDeny)
	}
}
