package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
)

const commented = `# my settings
[docker]
host = ""   # detect

[images]
python = "python:3.12-slim-bookworm" # the default
pull = "missing"
allowed = [
  "python:*", # pythons
  "ghcr.io/me/*",
]

[limits]
# memory per sandbox
memory_mb = 512
cpus = 1.0

[languages.ruby]
image = "ruby:3.3-slim-bookworm"
run = ["ruby", "{file}"]
extension = ".rb"

[network]
default = "none"
`

func TestSaveKeepsComments(t *testing.T) {
	tests := []struct {
		name   string
		before string
		edit   func(c *Config)
		after  string
	}{
		{
			name:   "scalar replaced in place, comment kept",
			before: commented,
			edit:   func(c *Config) { c.Limits.MemoryMB = 1024 },
			after:  strings.Replace(commented, "memory_mb = 512", "memory_mb = 1024", 1),
		},
		{
			name:   "multi-line array replaced whole",
			before: commented,
			edit:   func(c *Config) { c.Images.Allowed = []string{"node:*"} },
			after: strings.Replace(commented, `[
  "python:*", # pythons
  "ghcr.io/me/*",
]`, `["node:*"]`, 1),
		},
		{
			name:   "string with a trailing comment",
			before: commented,
			edit:   func(c *Config) { c.Images.Python = "python:3.13" },
			after:  strings.Replace(commented, `python = "python:3.12-slim-bookworm" # the default`, `python = "python:3.13" # the default`, 1),
		},
		{
			name:   "quotes and backslashes escaped",
			before: "[files]\nwrite_root = '~/x' # literal\n",
			edit:   func(c *Config) { c.Files.WriteRoot = `C:\out "x"` },
			after:  "[files]\nwrite_root = \"C:\\\\out \\\"x\\\"\" # literal\n",
		},
		{
			name:   "missing key added to its table",
			before: commented,
			edit:   func(c *Config) { c.Limits.Pids = 64 },
			after:  strings.Replace(commented, "cpus = 1.0\n", "cpus = 1.0\npids = 64\n", 1),
		},
		{
			name:   "missing table added at the end",
			before: commented,
			edit:   func(c *Config) { c.Tray.Autostart = true; c.Tray.HTTPPort = 8765 },
			after:  commented + "\n[tray]\nautostart = true\nhttp_port = 8765\n",
		},
		{
			name:   "float keeps a decimal point",
			before: commented,
			edit:   func(c *Config) { c.Limits.CPUs = 2 },
			after:  strings.Replace(commented, "cpus = 1.0", "cpus = 2.0", 1),
		},
		{
			name:   "dotted key in the root table",
			before: "limits.memory_mb = 100 # small\n",
			edit:   func(c *Config) { c.Limits.MemoryMB = 200 },
			after:  "limits.memory_mb = 200 # small\n",
		},
		{
			name:   "bracket inside a string is not a header",
			before: "[files]\nwrite_root = \"/tmp/[x]\" # odd\n",
			edit:   func(c *Config) { c.Files.MaxCopyMB = 5 },
			after:  "[files]\nwrite_root = \"/tmp/[x]\" # odd\nmax_copy_mb = 5\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			if err := os.WriteFile(path, []byte(tt.before), 0o640); err != nil {
				t.Fatal(err)
			}
			c, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			tt.edit(c)
			backup, err := Save(path, c)
			if err != nil {
				t.Fatal(err)
			}
			got, _ := os.ReadFile(path)
			if diff := cmp.Diff(tt.after, string(got)); diff != "" {
				t.Errorf("file (-want +got):\n%s", diff)
			}
			if b, err := os.ReadFile(backup); err != nil || string(b) != tt.before {
				t.Errorf("backup %q = %q, %v; want the old file", backup, b, err)
			}
			if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
				t.Errorf("mode %v, want the old file's 0640", fi.Mode().Perm())
			}
			again, err := Load(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(settingsOf(c), settingsOf(again), cmp.AllowUnexported(setting{})); diff != "" {
				t.Errorf("reloaded settings differ (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSaveNewFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "config.toml")
	c := Default()
	c.Limits.MaxSandboxes = 3
	backup, err := Save(path, c)
	if err != nil || backup != "" {
		t.Fatalf("Save = %q, %v; want no backup, no error", backup, err)
	}
	data, _ := os.ReadFile(path)
	if !strings.HasPrefix(string(data), header) || !strings.Contains(string(data), "\n[limits]\n") {
		t.Errorf("new file lacks the header or a table:\n%s", data)
	}
	if strings.Contains(string(data), "[tray]") {
		t.Errorf("new file spells out [tray] at its defaults:\n%s", data)
	}
	got, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if got.Limits.MaxSandboxes != 3 {
		t.Errorf("max_sandboxes = %d, want 3", got.Limits.MaxSandboxes)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestSaveUnchangedWritesNothing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(commented), 0o600)
	c, _ := Load(path)
	backup, err := Save(path, c)
	if err != nil || backup != "" {
		t.Fatalf("Save = %q, %v; want nothing done", backup, err)
	}
	if m, _ := filepath.Glob(path + ".*.bak"); len(m) != 0 {
		t.Errorf("backups made: %v", m)
	}
}

func TestSaveRefuses(t *testing.T) {
	tests := []struct {
		name   string
		before string
		edit   func(c *Config)
		want   error
	}{
		{"invalid value", commented, func(c *Config) { c.Limits.MemoryMB = 1 }, ErrInvalid},
		{"file on disk invalid", "[limits]\nmemory_mb = \"x\"\n", func(c *Config) {}, ErrNotSaved},
		{"languages changed", commented, func(c *Config) { delete(c.Languages, "ruby") }, ErrNotSaved},
		{"inline table", "limits = { memory_mb = 100 }\n", func(c *Config) { c.Limits.MemoryMB = 200 }, ErrNotSaved},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "config.toml")
			os.WriteFile(path, []byte(tt.before), 0o600)
			c, err := Load(path)
			if err != nil {
				c = Default()
				c.Source = path
			}
			tt.edit(c)
			_, err = Save(path, c)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Save error = %v, want %v", err, tt.want)
			}
			if got, _ := os.ReadFile(path); string(got) != tt.before {
				t.Errorf("file changed to:\n%s", got)
			}
			if m, _ := filepath.Glob(path + ".*.bak"); len(m) != 0 {
				t.Errorf("backups made: %v", m)
			}
		})
	}
}

func TestSaveBackupsNeverOverwrite(t *testing.T) {
	backupNow = func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }
	t.Cleanup(func() { backupNow = time.Now })
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(commented), 0o600)
	var backups []string
	for _, mb := range []int{100, 200} {
		c, _ := Load(path)
		c.Limits.MemoryMB = mb
		b, err := Save(path, c)
		if err != nil {
			t.Fatal(err)
		}
		backups = append(backups, filepath.Base(b))
	}
	want := []string{"config.toml.20260102-030405.bak", "config.toml.20260102-030405-2.bak"}
	if diff := cmp.Diff(want, backups); diff != "" {
		t.Errorf("backups (-want +got):\n%s", diff)
	}
}

// TestSaveBackupsPruned: the config's backups follow the same rule as AI
// clients' config backups (sandbox/filebackup): the oldest, holding the
// file before the tray first saved it, and the newest few are kept.
func TestSaveBackupsPruned(t *testing.T) {
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	backupNow = func() time.Time { return clock }
	t.Cleanup(func() { backupNow = time.Now })
	path := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(path, []byte(commented), 0o600)
	var made []string
	for i := range 9 {
		c, _ := Load(path)
		c.Limits.MemoryMB = 100 + i
		b, err := Save(path, c)
		if err != nil {
			t.Fatal(err)
		}
		made = append(made, b)
		clock = clock.Add(time.Second)
	}
	want := append([]string{made[0]}, made[len(made)-(filebackup.Keep-1):]...)
	if diff := cmp.Diff(want, filebackup.List(path)); diff != "" {
		t.Errorf("backups left (-want +got):\n%s", diff)
	}
	if got, _ := os.ReadFile(made[0]); string(got) != commented {
		t.Errorf("the oldest backup is not the file as it was:\n%s", got)
	}
}
