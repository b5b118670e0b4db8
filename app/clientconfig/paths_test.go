package clientconfig

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestConfigPaths(t *testing.T) {
	linux := mapEnv{"HOME": "/home/me"}
	linuxXDG := mapEnv{"HOME": "/home/me", "XDG_CONFIG_HOME": "/home/me/.xdg", "CODEX_HOME": "/srv/codex"}
	linuxRelXDG := mapEnv{"HOME": "/home/me", "XDG_CONFIG_HOME": "relative/dir"}
	darwin := mapEnv{"HOME": "/Users/me", "XDG_CONFIG_HOME": "/Users/me/.xdg"}
	windows := mapEnv{
		"USERPROFILE":  `C:\Users\me`,
		"APPDATA":      `C:\Users\me\AppData\Roaming`,
		"LOCALAPPDATA": `C:\Users\me\AppData\Local`,
	}
	windowsNoAppData := mapEnv{"USERPROFILE": `C:\Users\me`}
	tests := []struct {
		goos string
		env  mapEnv
		want map[string]string
	}{
		{"linux", linux, map[string]string{
			"claude":      "/home/me/.config/Claude/claude_desktop_config.json",
			"cursor":      "/home/me/.cursor/mcp.json",
			"vscode":      "/home/me/.config/Code/User/mcp.json",
			"windsurf":    "/home/me/.codeium/windsurf/mcp_config.json",
			"claude-code": "/home/me/.claude.json",
			"gemini":      "/home/me/.gemini/settings.json",
			"lmstudio":    "/home/me/.lmstudio/mcp.json",
			"zed":         "/home/me/.config/zed/settings.json",
			"codex":       "/home/me/.codex/config.toml",
		}},
		{"linux", linuxXDG, map[string]string{
			"claude":      "/home/me/.xdg/Claude/claude_desktop_config.json",
			"cursor":      "/home/me/.cursor/mcp.json",
			"vscode":      "/home/me/.xdg/Code/User/mcp.json",
			"windsurf":    "/home/me/.codeium/windsurf/mcp_config.json",
			"claude-code": "/home/me/.claude.json",
			"gemini":      "/home/me/.gemini/settings.json",
			"lmstudio":    "/home/me/.lmstudio/mcp.json",
			"zed":         "/home/me/.xdg/zed/settings.json",
			"codex":       "/srv/codex/config.toml",
		}},
		{"linux", linuxRelXDG, map[string]string{
			"claude": "/home/me/.config/Claude/claude_desktop_config.json",
			"zed":    "/home/me/.config/zed/settings.json",
		}},
		{"darwin", darwin, map[string]string{
			"claude":      "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
			"cursor":      "/Users/me/.cursor/mcp.json",
			"vscode":      "/Users/me/Library/Application Support/Code/User/mcp.json",
			"windsurf":    "/Users/me/.codeium/windsurf/mcp_config.json",
			"claude-code": "/Users/me/.claude.json",
			"gemini":      "/Users/me/.gemini/settings.json",
			"lmstudio":    "/Users/me/.lmstudio/mcp.json",
			"zed":         "/Users/me/.config/zed/settings.json",
			"codex":       "/Users/me/.codex/config.toml",
		}},
		{"windows", windows, map[string]string{
			"claude":      `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
			"cursor":      `C:\Users\me\.cursor\mcp.json`,
			"vscode":      `C:\Users\me\AppData\Roaming\Code\User\mcp.json`,
			"windsurf":    `C:\Users\me\.codeium\windsurf\mcp_config.json`,
			"claude-code": `C:\Users\me\.claude.json`,
			"gemini":      `C:\Users\me\.gemini\settings.json`,
			"lmstudio":    `C:\Users\me\.lmstudio\mcp.json`,
			"zed":         `C:\Users\me\AppData\Roaming\Zed\settings.json`,
			"codex":       `C:\Users\me\.codex\config.toml`,
		}},
		{"windows", windowsNoAppData, map[string]string{
			"claude": `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`,
			"zed":    `C:\Users\me\AppData\Roaming\Zed\settings.json`,
		}},
	}
	for _, tt := range tests {
		env := Env{GOOS: tt.goos, Getenv: tt.env.get}
		got := map[string]string{}
		for name := range tt.want {
			c, err := Lookup(name)
			if err != nil {
				t.Fatal(err)
			}
			if got[name], err = c.ConfigPath(env); err != nil {
				t.Errorf("%s %s: %v", tt.goos, name, err)
			}
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s paths with %v (-want +got):\n%s", tt.goos, tt.env, diff)
		}
	}
}

// TestClaudeMSIX checks that the Microsoft Store build's file is preferred
// once its package directory exists. Windows paths are built with
// backslashes, which on other systems are ordinary file name characters, so
// the test makes a directory with exactly that name.
func TestClaudeMSIX(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the test fakes Windows paths on a system with / as separator")
	}
	local := t.TempDir()
	env := Env{GOOS: "windows", Getenv: mapEnv{"USERPROFILE": `C:\Users\me`, "APPDATA": `C:\Users\me\AppData\Roaming`, "LOCALAPPDATA": local}.get}
	before, _ := claudeDesktop.ConfigPath(env)
	if want := `C:\Users\me\AppData\Roaming\Claude\claude_desktop_config.json`; before != want {
		t.Errorf("without the package: %q, want %q", before, want)
	}
	if err := os.MkdirAll(filepath.Join(local+`\Packages`, "Claude_pzs8sxrjxfjjc"), 0o755); err != nil {
		t.Fatal(err)
	}
	after, _ := claudeDesktop.ConfigPath(env)
	if want := local + `\Packages\Claude_pzs8sxrjxfjjc\LocalCache\Roaming\Claude\claude_desktop_config.json`; after != want {
		t.Errorf("with the package: %q, want %q", after, want)
	}
}

func TestNoHome(t *testing.T) {
	env := Env{GOOS: "linux", Getenv: mapEnv{}.get}
	for _, c := range Clients() {
		if _, err := c.ConfigPath(env); err == nil {
			t.Errorf("%s: ConfigPath without HOME succeeded", c.name)
		}
	}
}

func TestInstalled(t *testing.T) {
	env, home := testEnv(t)
	bin := t.TempDir()
	env.Getenv = mapEnv{"HOME": home, "PATH": bin}.get
	for _, c := range Clients() {
		if c.Installed(env) {
			t.Errorf("%s looks installed in an empty home", c.name)
		}
	}
	// A config directory is enough.
	if err := os.MkdirAll(filepath.Join(home, ".cursor"), 0o755); err != nil {
		t.Fatal(err)
	}
	// So is a command on PATH.
	if err := os.WriteFile(filepath.Join(bin, "claude"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	// But not a file that is not executable.
	if err := os.WriteFile(filepath.Join(bin, "gemini"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range Clients() {
		got[c.name] = c.Installed(env)
	}
	want := map[string]bool{"claude": false, "cursor": true, "vscode": false, "windsurf": false,
		"claude-code": true, "gemini": false, "lmstudio": false, "zed": false, "codex": false}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Installed (-want +got):\n%s", diff)
	}
}

func TestLookup(t *testing.T) {
	want := []string{"claude", "cursor", "vscode", "windsurf", "claude-code", "gemini", "lmstudio", "zed", "codex"}
	if diff := cmp.Diff(want, Names()); diff != "" {
		t.Errorf("Names (-want +got):\n%s", diff)
	}
	for _, n := range want {
		if c, err := Lookup(n); err != nil || c.Name() != n || c.DisplayName() == "" {
			t.Errorf("Lookup(%q) = %v, %v", n, c, err)
		}
	}
	if _, err := Lookup("notepad"); !errors.Is(err, ErrUnknownClient) {
		t.Errorf("Lookup(notepad) = %v, want ErrUnknownClient", err)
	}
}
