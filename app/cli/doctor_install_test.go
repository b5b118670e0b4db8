package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestCheckInstall lays out fresh installs, whole and with a piece
// missing, and checks what the doctor tells the person to fix.
func TestCheckInstall(t *testing.T) {
	for _, tc := range []struct {
		name      string
		goos      string
		bin       string   // the server's directory, under home
		files     []string // created under home
		libs      []string // what ldd would report missing
		onPath    bool
		want      []string // problems, by a phrase each
		installed bool
		notes     int
	}{
		{name: "tarball install, complete", goos: "linux", bin: ".local/bin",
			files:  []string{".local/bin/mcp-sandbox-tray", ".local/share/applications/" + desktopEntryName},
			onPath: true, installed: true},
		{name: "not on PATH is a note, not a problem", goos: "linux", bin: ".local/bin",
			files: []string{".local/bin/mcp-sandbox-tray", ".local/share/applications/" + desktopEntryName},
			notes: 1, installed: true},
		{name: "server copied alone", goos: "linux", bin: ".local/bin", onPath: true, installed: true,
			want: []string{"the tray app is missing"}},
		{name: "no menu entry", goos: "linux", bin: ".local/bin", files: []string{".local/bin/mcp-sandbox-tray"},
			onPath: true, installed: true, want: []string{"no entry in the applications menu"}},
		{name: "tray libraries missing", goos: "linux", bin: ".local/bin",
			files: []string{".local/bin/mcp-sandbox-tray", ".local/share/applications/" + desktopEntryName},
			libs:  []string{"libGL.so.1"}, onPath: true, installed: true,
			want: []string{"sudo apt install libgl1"}},
		{name: "a build directory is not an install", goos: "linux", bin: "src/bin"},
		{name: "Windows install, complete", goos: "windows", bin: "AppData/Local/Programs/MCP Sandbox",
			files: []string{"AppData/Local/Programs/MCP Sandbox/mcp-sandbox-tray.exe"}, onPath: true, installed: true},
		{name: "Windows server alone", goos: "windows", bin: "AppData/Local/Programs/MCP Sandbox",
			onPath: true, installed: true, want: []string{"no mcp-sandbox-tray.exe beside"}},
		{name: "macOS app bundle", goos: "darwin", bin: "Applications/MCP Sandbox.app/Contents/MacOS",
			files: []string{"Applications/MCP Sandbox.app/Contents/MacOS/mcp-sandbox-tray"}, onPath: true, installed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			exe := filepath.Join(home, tc.bin, "mcp-sandbox")
			if tc.goos == "windows" {
				exe += ".exe"
			}
			rel, err := filepath.Rel(home, exe)
			if err != nil {
				t.Fatal(err)
			}
			for _, f := range append(tc.files, rel) {
				p := filepath.Join(home, f)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			p := installProbe{
				goos: tc.goos, exe: exe, home: home,
				localAppData: filepath.Join(home, "AppData", "Local"),
				dataDirs:     []string{filepath.Join(home, ".local", "share"), filepath.Join(home, "usr-share")},
				lookPath: func(string) (string, error) {
					if tc.onPath {
						return exe, nil
					}
					return "", errors.New("not found")
				},
				missingLibs: func(context.Context, string) []string { return tc.libs },
			}
			var got []string
			r := checkInstall(context.Background(), p, func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
			if len(got) != len(tc.want) {
				t.Fatalf("problems = %q, want ones containing %q", got, tc.want)
			}
			for i, w := range tc.want {
				if !strings.Contains(got[i], w) {
					t.Errorf("problem %q does not say %q", got[i], w)
				}
			}
			if r.Installed != tc.installed || len(r.Notes) != tc.notes || r.OnPath != tc.onPath {
				t.Errorf("report = %+v", r)
			}
			if diff := cmp.Diff(tc.libs, r.MissingLibraries); diff != "" {
				t.Errorf("missing libraries (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCheckInstallFromDiskImage: a Mac user who starts the app from the
// .dmg would get client configs pointing into /Volumes.
func TestCheckInstallFromDiskImage(t *testing.T) {
	var got []string
	p := installProbe{goos: "darwin", exe: "/Volumes/MCP Sandbox/MCP Sandbox.app/Contents/MacOS/mcp-sandbox",
		lookPath: func(string) (string, error) { return "", errors.New("no") }}
	checkInstall(context.Background(), p, func(f string, a ...any) { got = append(got, fmt.Sprintf(f, a...)) })
	if len(got) != 1 || !strings.Contains(got[0], "drag MCP Sandbox to Applications") {
		t.Errorf("problems = %q", got)
	}
}

func TestInstalledDir(t *testing.T) {
	p := installProbe{goos: "linux", home: "/home/ada"}
	for dir, want := range map[string]bool{
		"/usr/bin": true, "/usr/local/bin": true, "/home/ada/.local/bin": true,
		"/home/ada/src/mcp-sandbox/bin": false, "/tmp/go-build1/b001/exe": false,
	} {
		if got := installedDir(p, dir); got != want {
			t.Errorf("installedDir(%s) = %v, want %v", dir, got, want)
		}
	}
}

// TestLddMissing builds a program against a shared library, deletes the
// library, and checks that the real ldd's report is read right.
func TestLddMissing(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil || runtime.GOOS != "linux" {
		t.Skip("needs gcc and ldd (Linux)")
	}
	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("lib.c", "int fake(void) { return 1; }\n")
	write("main.c", "int fake(void);\nint main(void) { return fake(); }\n")
	for _, args := range [][]string{
		{"-shared", "-fPIC", "-Wl,-soname,libmcpfake.so.1", "-o", "libmcpfake.so.1", "lib.c"},
		{"-o", "prog", "main.c", "-L.", "-l:libmcpfake.so.1", "-Wl,-rpath,$ORIGIN"},
	} {
		cmd := exec.Command(gcc, args...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("gcc %v: %v\n%s", args, err, out)
		}
	}
	prog := filepath.Join(dir, "prog")
	if got := lddMissing(context.Background(), prog); len(got) != 0 {
		t.Errorf("with the library present, ldd reports %v missing", got)
	}
	if err := os.Remove(filepath.Join(dir, "libmcpfake.so.1")); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"libmcpfake.so.1"}, lddMissing(context.Background(), prog)); diff != "" {
		t.Errorf("missing (-want +got):\n%s", diff)
	}
}
