package bundled

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func touch(t *testing.T, p string, mode os.FileMode) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"), mode); err != nil {
		t.Fatal(err)
	}
}

func noPath(string) (string, error) { return "", errors.New("not on PATH") }

func TestFind(t *testing.T) {
	tests := []struct {
		name    string
		layout  map[string]os.FileMode // files under the temp dir
		link    string                 // a symlink to the tray, if set
		exe     string
		goos    string
		want    string // relative to the temp dir; "" means ErrNotFound
		wantSrc string
	}{
		{name: "next to the tray", layout: map[string]os.FileMode{"bin/mcp-sandbox-tray": 0o755, "bin/mcp-sandbox": 0o755},
			exe: "bin/mcp-sandbox-tray", goos: "linux", want: "bin/mcp-sandbox", wantSrc: "next to the tray"},
		{name: "not executable", layout: map[string]os.FileMode{"bin/mcp-sandbox-tray": 0o755, "bin/mcp-sandbox": 0o644},
			exe: "bin/mcp-sandbox-tray", goos: "linux"},
		{name: "windows exe", layout: map[string]os.FileMode{"p/mcp-sandbox-tray.exe": 0o644, "p/mcp-sandbox.exe": 0o644},
			exe: "p/mcp-sandbox-tray.exe", goos: "windows", want: "p/mcp-sandbox.exe", wantSrc: "next to the tray"},
		{name: "macOS bundle helpers", layout: map[string]os.FileMode{
			"MCP Sandbox.app/Contents/MacOS/mcp-sandbox-tray": 0o755, "MCP Sandbox.app/Contents/Helpers/mcp-sandbox": 0o755},
			exe: "MCP Sandbox.app/Contents/MacOS/mcp-sandbox-tray", goos: "darwin",
			want: "MCP Sandbox.app/Contents/Helpers/mcp-sandbox", wantSrc: "in the app bundle"},
		{name: "macOS bundle resources", layout: map[string]os.FileMode{
			"A.app/Contents/MacOS/mcp-sandbox-tray": 0o755, "A.app/Contents/Resources/mcp-sandbox": 0o755},
			exe: "A.app/Contents/MacOS/mcp-sandbox-tray", goos: "darwin",
			want: "A.app/Contents/Resources/mcp-sandbox", wantSrc: "in the app bundle"},
		{name: "through a symlink", layout: map[string]os.FileMode{"opt/mcp/mcp-sandbox-tray": 0o755, "opt/mcp/mcp-sandbox": 0o755},
			link: "usr/bin/mcp-sandbox-tray", exe: "usr/bin/mcp-sandbox-tray", goos: "linux",
			want: "opt/mcp/mcp-sandbox", wantSrc: "next to the tray"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, mode := range tt.layout {
				touch(t, filepath.Join(dir, p), mode)
			}
			if tt.link != "" {
				os.MkdirAll(filepath.Join(dir, filepath.Dir(tt.link)), 0o755)
				if err := os.Symlink(filepath.Join(dir, "opt/mcp/mcp-sandbox-tray"), filepath.Join(dir, tt.link)); err != nil {
					t.Fatal(err)
				}
			}
			got, err := find(filepath.Join(dir, tt.exe), tt.goos, noPath)
			if tt.want == "" {
				if !errors.Is(err, ErrNotFound) {
					t.Fatalf("find = %+v, %v; want ErrNotFound", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			wantPath := filepath.Join(dir, tt.want)
			if real, err := filepath.EvalSymlinks(got.Path); err == nil {
				got.Path = real
			}
			if real, err := filepath.EvalSymlinks(wantPath); err == nil {
				wantPath = real
			}
			if got.Path != wantPath || got.Source != tt.wantSrc {
				t.Errorf("find = %+v, want %s (%s)", got, wantPath, tt.wantSrc)
			}
		})
	}
}

func TestFindFallsBackToPATH(t *testing.T) {
	dir := t.TempDir()
	touch(t, filepath.Join(dir, "elsewhere", "mcp-sandbox"), 0o755)
	got, err := find(filepath.Join(dir, "tray", "mcp-sandbox-tray"), "linux", func(name string) (string, error) {
		return filepath.Join(dir, "elsewhere", name), nil
	})
	if err != nil || got.Source != "on PATH" {
		t.Fatalf("find = %+v, %v; want the PATH one", got, err)
	}
}
