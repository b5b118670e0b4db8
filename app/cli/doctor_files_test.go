package cli

import (
	"slices"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func TestDoctorFilesWarnings(t *testing.T) {
	home := t.TempDir()
	t.Setenv("MCP_SANDBOX_STATE_DIR", home+"/state")
	for _, tc := range []struct {
		name  string
		edit  func(*config.Config)
		warns []string // each a part of one warning
	}{
		{"defaults", func(*config.Config) {}, nil},
		{"write root is the home", func(c *config.Config) { c.Files.WriteRoot = "~" }, []string{`files.write_root = "~" covers`}},
		{"write root inside a protected place", func(c *config.Config) { c.Files.WriteRoot = "~/.ssh/out" }, []string{"every copy_out will be refused"}},
		{"read root is the whole disk", func(c *config.Config) { c.Files.ReadRoots = []string{"/"} }, []string{"covers more than your home"}},
		{"deny lists replaced", func(c *config.Config) {
			c.Files.ReadDenyReplace, c.Files.ReadDeny = true, []string{"~/.vault"}
			c.Files.WriteDenyReplace, c.Files.WriteDeny = true, nil
		}, []string{"read_deny_replace = true", "write_deny_replace = true"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Default()
			tc.edit(cfg)
			r := checkFiles(cfg, home)
			if len(r.Warnings) != len(tc.warns) {
				t.Fatalf("warnings = %q, want %d", r.Warnings, len(tc.warns))
			}
			for i, w := range tc.warns {
				if !strings.Contains(r.Warnings[i], w) {
					t.Errorf("warning %d = %q, want it to say %q", i, r.Warnings[i], w)
				}
			}
			// What is protected is always said, with MCP Sandbox's own
			// places in both lists.
			for _, own := range config.OwnPaths() {
				if !slices.Contains(r.ReadDenied, own) || !slices.Contains(r.WriteDenied, own) {
					t.Errorf("%s is not listed as protected both ways", own)
				}
			}
		})
	}
}
