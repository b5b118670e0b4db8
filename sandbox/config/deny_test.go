package config

import (
	"runtime"
	"slices"
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
