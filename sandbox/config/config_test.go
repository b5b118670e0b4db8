package config

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestMissingFileIsDefaults(t *testing.T) {
	p := filepath.Join(t.TempDir(), "nope.toml")
	c, err := Load(p)
	if err != nil {
		t.Fatal(err)
	}
	want := Default()
	want.Source = p
	if diff := cmp.Diff(want, c); diff != "" {
		t.Error(diff)
	}
}

func TestParseDesignExample(t *testing.T) {
	// The example of sandbox/README.md §Configuration, verbatim in substance.
	src := `
[docker]
host = ""
runtime = "auto"

[images]
python = "python:3.12-slim-bookworm"
javascript = "node:22-bookworm-slim"
bash = "debian:bookworm-slim"
pull = "missing"
allowed = ["python:*", "ghcr.io/me/*"]

[languages.ruby]
image = "ruby:3.3-slim-bookworm"
run = ["ruby", "{file}"]
extension = ".rb"

[limits]
memory_mb = 1024
cpus = 2.0
pids = 128
workspace_mb = 256
exec_timeout_seconds = 30
max_exec_timeout_seconds = 300
output_bytes = 32768
image_bytes = 1048576
idle_ttl_minutes = 10
max_sandboxes = 4

[network]
default = "none"
allow_egress = true
install = false

[files]
read_roots = ["~/src"]
write_root = "~/out"
max_copy_mb = 50

[pool]
size = 2
languages = ["python", "ruby"]
`
	c, err := Parse("config.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if c.Limits.MemoryMB != 1024 || c.Limits.CPUs != 2 || c.Network.Install || !c.Network.AllowEgress || c.Pool.Size != 2 || c.Docker.Runtime != "auto" {
		t.Errorf("parsed %+v", c)
	}
	ruby, ok := c.Language("ruby")
	if !ok || ruby.Image != "ruby:3.3-slim-bookworm" || ruby.Extension != ".rb" {
		t.Errorf("ruby = %+v", ruby)
	}
	if diff := cmp.Diff([]string{"python", "javascript", "bash", "ruby"}, c.LanguageNames()); diff != "" {
		t.Error(diff)
	}
	for img, want := range map[string]bool{
		"python:3.12-slim-bookworm": true, // a language image
		"python:3.13":               true, // python:*
		"ghcr.io/me/tool:1":         true,
		"ghcr.io/other/tool:1":      false,
		"evil/miner":                false,
		"ruby:3.3-slim-bookworm":    true,
	} {
		if got := c.ImageAllowed(img); got != want {
			t.Errorf("ImageAllowed(%q) = %v, want %v", img, got, want)
		}
	}
}

func TestInvalidNamesTheLine(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		line      int
		key       string
	}{
		{"syntax", "[limits]\nmemory_mb = = 3\n", 2, ""},
		{"wrong type", "[limits]\nmemory_mb = 512\ncpus = \"two\"\n", 3, "limits.cpus"},
		{"unknown key", "[limits]\nmemory_mb = 512\nmemroy_mb = 3\n", 3, "limits.memroy_mb"},
		{"unknown section", "[limitz]\nx = 1\n", 1, ""},
		{"value out of range", "[network]\ndefault = \"none\"\n\n[limits]\nmemory_mb = 1\n", 5, "limits.memory_mb"},
		{"image budget too large", "[limits]\nimage_bytes = 1000000000\n", 2, "limits.image_bytes"},
		{"image budget negative", "[limits]\nimage_bytes = -1\n", 2, "limits.image_bytes"},
		{"bad enum", "[images]\npull = \"sometimes\"\n", 2, "images.pull"},
		{"bad image", "[images]\npython = \"--privileged\"\n", 2, "images.python"},
		{"egress default without allow", "[network]\ndefault = \"egress\"\n", 2, "network.default"},
		{"unknown network mode", "[network]\ndefault = \"proxy\"\n", 2, "network.default"},
		{"allow_domains with a URL", "[network]\nallow_domains = [\"pypi.org\", \"https://files.pythonhosted.org\"]\n", 2, "network.allow_domains"},
		{"allow_domains address without port", "[network]\nallow_domains = [\"10.0.0.5\"]\n", 2, "network.allow_domains"},
		{"max_connections zero", "[network]\nmax_connections = 0\n", 2, "network.max_connections"},
		{"allowed origin with a path", "[http]\nallowed_origins = [\"http://127.0.0.1:6274/app\"]\n", 2, "http.allowed_origins"},
		{"allowed origin wildcard", "[http]\nallowed_origins = [\"*\"]\n", 2, "http.allowed_origins"},
		{"language without run", "[languages.ruby]\nimage = \"ruby:3\"\nextension = \".rb\"\n", 1, "languages.ruby.run"},
		{"pool language unknown", "[pool]\nlanguages = [\"cobol\"]\n", 2, "pool.languages"},
		{"apply_roots relative", "[files]\napply_roots = [\"~\", \"src\"]\n", 2, "files.apply_roots"},
		{"apply_roots empty name", "[files]\napply_roots = [\"\"]\n", 2, "files.apply_roots"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse("config.toml", []byte(tc.src))
			var ce *Error
			if !errors.As(err, &ce) || !errors.Is(err, ErrInvalid) {
				t.Fatalf("got %v, want *Error", err)
			}
			if ce.Line != tc.line {
				t.Errorf("line = %d, want %d (%v)", ce.Line, tc.line, err)
			}
			if tc.key != "" && ce.Key != tc.key {
				t.Errorf("key = %q, want %q", ce.Key, tc.key)
			}
			if !strings.HasPrefix(err.Error(), "config.toml:") {
				t.Errorf("message %q does not start with the file and line", err)
			}
		})
	}
}

func TestWatcherReloads(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(p, []byte("[limits]\nmemory_mb = 256\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := NewWatcher(p, 20*time.Millisecond, nil)
	if err != nil {
		t.Fatal(err)
	}
	changed := make(chan *Config, 4)
	w.OnChange(func(c *Config) { changed <- c })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)

	write := func(s string) {
		// A new name then a rename, as editors do.
		tmp := p + ".tmp"
		if err := os.WriteFile(tmp, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
	write("[limits]\nmemory_mb = 768\n")
	select {
	case c := <-changed:
		if c.Limits.MemoryMB != 768 {
			t.Errorf("reloaded memory = %d", c.Limits.MemoryMB)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reload")
	}
	// An invalid file keeps the last good settings and reports why.
	write("[limits]\nmemory_mb = \"x\"\n")
	deadline := time.Now().Add(5 * time.Second)
	for w.Err() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if w.Err() == nil || w.Current().Limits.MemoryMB != 768 {
		t.Errorf("err = %v, memory = %d", w.Err(), w.Current().Limits.MemoryMB)
	}
	// Removing the file means defaults again.
	os.Remove(p)
	select {
	case c := <-changed:
		if c.Limits.MemoryMB != Default().Limits.MemoryMB {
			t.Errorf("after removal memory = %d", c.Limits.MemoryMB)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no reload after removal")
	}
}

// TestWatcherSourceIsItsPath: the configuration a watcher holds names the
// watcher's file as its Source whether the file is missing, present, or
// removed since (the server's Asker writes "Always allow" to that Source,
// with no fallback of its own).
func TestWatcherSourceIsItsPath(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	w, err := NewWatcher(p, time.Hour, nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := []struct {
		name   string
		change func() error
	}{
		{"missing", func() error { return nil }},
		{"written", func() error { return os.WriteFile(p, []byte("[limits]\nmemory_mb = 256\n"), 0o600) }},
		{"removed", func() error { return os.Remove(p) }},
	}
	for _, st := range steps {
		if err := st.change(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.reload(false); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got := w.Current().Source; got != p {
			t.Errorf("%s: Source = %q, want %q", st.name, got, p)
		}
	}
}

func TestInvalidFileRefusedAtStart(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("[limits\n"), 0o600)
	if _, err := NewWatcher(p, time.Second, nil); !errors.Is(err, ErrInvalid) {
		t.Fatalf("got %v", err)
	}
}

// The tray runs on the defaults while the file is invalid and takes the
// file up as soon as it is fixed, without a restart.
func TestWatcherOrDefaultsRecovers(t *testing.T) {
	p := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(p, []byte("[limits]\nmemory_mb = 768\n[limits\n"), 0o600)
	w, err := NewWatcherOrDefaults(p, 20*time.Millisecond, nil)
	if !errors.Is(err, ErrInvalid) || w == nil {
		t.Fatalf("got %v, %v", w, err)
	}
	if w.Err() == nil || w.Current().Limits.MemoryMB != Default().Limits.MemoryMB || w.Current().Source != p {
		t.Fatalf("err = %v, current = %+v", w.Err(), w.Current())
	}
	changed := make(chan *Config, 4)
	w.OnChange(func(c *Config) { changed <- c })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go w.Run(ctx)
	os.WriteFile(p, []byte("[limits]\nmemory_mb = 768\n"), 0o600)
	select {
	case c := <-changed:
		if c.Limits.MemoryMB != 768 || w.Err() != nil {
			t.Errorf("after the fix: memory = %d, err = %v", c.Limits.MemoryMB, w.Err())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the fixed file was not taken up")
	}
	// A valid file at start is an ordinary watcher.
	if w, err := NewWatcherOrDefaults(p, time.Second, nil); err != nil || w.Current().Limits.MemoryMB != 768 {
		t.Errorf("valid file: %v %v", w, err)
	}
}

func TestPathsFollowEnvironment(t *testing.T) {
	t.Setenv("MCP_SANDBOX_CONFIG", "/x/c.toml")
	if Path() != "/x/c.toml" {
		t.Errorf("Path = %q", Path())
	}
	t.Setenv("MCP_SANDBOX_CONFIG", "")
	t.Setenv("XDG_CONFIG_HOME", "/cfg")
	t.Setenv("XDG_STATE_HOME", "/state")
	t.Setenv("MCP_SANDBOX_STATE_DIR", "")
	if Path() != "/cfg/mcp-sandbox/config.toml" || StateDir() != "/state/mcp-sandbox" {
		t.Errorf("Path = %q, StateDir = %q", Path(), StateDir())
	}
}

// TestNetworkAllowlist: the allowlist keys read as written, and their
// defaults are the documented ones.
func TestNetworkAllowlist(t *testing.T) {
	d := Default().Network
	if d.Default != "none" || len(d.AllowDomains) != 0 || !d.Ask || d.MaxConnections != 64 {
		t.Errorf("defaults %+v", d)
	}
	src := "[network]\ndefault = \"allowlist\"\nallow_domains = [\"pypi.org\", \"*.pythonhosted.org\", \"127.0.0.2:8080\"]\nask = false\nmax_connections = 8\n"
	c, err := Parse("config.toml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	n := c.Network
	if n.Default != "allowlist" || len(n.AllowDomains) != 3 || n.Ask || n.MaxConnections != 8 {
		t.Errorf("parsed %+v", n)
	}
}

func TestCanonicalOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"http://127.0.0.1:6274":   "http://127.0.0.1:6274",
		"HTTP://LocalHost:80/":    "http://localhost",
		"https://[::1]:8443":      "https://[::1]:8443",
		"null":                    "",
		"file:///tmp/x":           "",
		"http://u@127.0.0.1:1":    "",
		"http://127.0.0.1:1/?a=b": "",
	} {
		if got := CanonicalOrigin(in); got != want {
			t.Errorf("CanonicalOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestApplyRootsDefaultToReadRoots(t *testing.T) {
	c, err := Parse("config.toml", []byte("[files]\nread_roots = [\"~/src\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Files.ApplyRootsOrRead(); len(got) != 1 || got[0] != "~/src" {
		t.Errorf("default apply roots: %q", got)
	}
	c, err = Parse("config.toml", []byte("[files]\nread_roots = [\"~\"]\napply_roots = [\"~/proj\", \"/srv/code\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Files.ApplyRootsOrRead(); len(got) != 2 || got[0] != "~/proj" {
		t.Errorf("apply roots: %q", got)
	}
}
