package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// deps lists the packages a command links, for GOOS/GOARCH and cgo as
// given.
func deps(t *testing.T, pkg, goos string, cgo bool) []string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", pkg)
	cmd.Dir = ".."
	cgoEnv := "CGO_ENABLED=0"
	if cgo {
		cgoEnv = "CGO_ENABLED=1"
	}
	cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", cgoEnv)
	out, err := cmd.Output()
	if err != nil {
		var stderr string
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = string(ee.Stderr)
		}
		t.Fatalf("go list -deps %s: %v\n%s", pkg, err, stderr)
	}
	return strings.Fields(string(out))
}

// forbidden is what the server must never link: Fyne and everything that
// only a GUI needs (OpenGL, GLFW, the tray's D-Bus library).
var forbidden = []string{"fyne.io/", "github.com/go-gl/", "github.com/godbus/", "runtime/cgo"}

// TestServerLinksNoFyne proves the contract of sandbox/README.md §Architecture: mcp-sandbox
// builds without cgo for every platform it ships on, and links no GUI code.
func TestServerLinksNoFyne(t *testing.T) {
	if _, err := os.Stat(filepath.Join("..", "go.mod")); err != nil {
		t.Fatalf("run from app/: %v", err)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, p := range deps(t, "./cmd/mcp-sandbox", goos, false) {
			for _, f := range forbidden {
				if strings.HasPrefix(p, f) {
					t.Errorf("%s: ./cmd/mcp-sandbox links %s", goos, p)
				}
			}
		}
	}
}

// TestWindowLinksFyne keeps the test above honest: the same check finds
// Fyne in the window.
func TestWindowLinksFyne(t *testing.T) {
	found := false
	for _, p := range deps(t, "./cmd/mcp-sandbox-window", "linux", true) {
		if strings.HasPrefix(p, "fyne.io/fyne/v2") {
			found = true
		}
	}
	if !found {
		t.Error("./cmd/mcp-sandbox-window does not link Fyne; the dependency check would prove nothing")
	}
}

// TestTrayLinksNoFyne: the idle tray is built on fyne.io/systray alone; the
// Fyne toolkit, OpenGL and GLFW (which poll and cost memory while idle)
// belong to the window process (docs/tray-and-window.md: the tray and
// the window).
func TestTrayLinksNoFyne(t *testing.T) {
	for _, goos := range []string{"linux", "windows"} {
		for _, p := range deps(t, "./cmd/mcp-sandbox-tray", goos, goos == "linux") {
			if strings.HasPrefix(p, "fyne.io/fyne/") || strings.HasPrefix(p, "github.com/go-gl/") {
				t.Errorf("%s: ./cmd/mcp-sandbox-tray links %s", goos, p)
			}
		}
	}
}

// TestOneMCPStack: the shipped programs link one MCP library, the one the
// server is built on. The official Go SDK is for tests only (it checks the
// server from outside).
func TestOneMCPStack(t *testing.T) {
	for _, c := range []struct {
		pkg string
		cgo bool
	}{{"./cmd/mcp-sandbox", false}, {"./cmd/mcp-sandbox-tray", true}, {"./cmd/mcp-sandbox-window", true}} {
		mcpgo := false
		for _, p := range deps(t, c.pkg, "linux", c.cgo) {
			if strings.HasPrefix(p, "github.com/modelcontextprotocol/go-sdk") {
				t.Errorf("%s links %s", c.pkg, p)
			}
			mcpgo = mcpgo || strings.HasPrefix(p, "github.com/mark3labs/mcp-go/client")
		}
		// Keeps the check honest: the client is in both programs.
		if !mcpgo {
			t.Errorf("%s does not link mcp-go's client; the check would prove nothing", c.pkg)
		}
	}
}

// trayOnly are the packages of the tray process: its menu, systray host,
// updater, autostart, first-run and HTTP child. The window shares what it
// needs with the tray through app/internal/traywin.
var trayOnly = []string{"app/trayapp", "app/traymenu", "app/update", "app/autostart", "app/firstrun", "app/supervisor"}

// modulePrefix is this module's import path, with its slash.
const modulePrefix = "github.com/mcp-sandbox/mcp-sandbox/"

// TestWindowLinksNoTray: the window binary links none of the tray's
// packages, and none of its own packages imports systray or D-Bus (Fyne's
// desktop driver still links both for its own tray and notification
// support; that is Fyne's, not ours).
func TestWindowLinksNoTray(t *testing.T) {
	for _, goos := range []string{"linux", "darwin", "windows"} {
		for _, p := range deps(t, "./cmd/mcp-sandbox-window", goos, true) {
			for _, f := range trayOnly {
				if p == modulePrefix+f {
					t.Errorf("%s: ./cmd/mcp-sandbox-window links %s", goos, p)
				}
			}
		}
	}
	for pkg, imports := range moduleImports(t, "./cmd/mcp-sandbox-window") {
		for _, imp := range imports {
			if strings.HasPrefix(imp, "fyne.io/systray") || strings.HasPrefix(imp, "github.com/godbus/") {
				t.Errorf("%s imports %s: the window has no tray", pkg, imp)
			}
		}
	}
}

// TestTrayLinksTrayPackages keeps the test above honest: the same names
// are found in the tray.
func TestTrayLinksTrayPackages(t *testing.T) {
	linked := deps(t, "./cmd/mcp-sandbox-tray", "linux", true)
	for _, f := range trayOnly {
		if !slices.Contains(linked, modulePrefix+f) {
			t.Errorf("./cmd/mcp-sandbox-tray does not link %s; TestWindowLinksNoTray would prove nothing for it", f)
		}
	}
	imports := moduleImports(t, "./cmd/mcp-sandbox-tray")
	if !slices.Contains(imports[modulePrefix+"app/trayapp"], "fyne.io/systray") {
		t.Error("app/trayapp does not import fyne.io/systray; TestWindowLinksNoTray's import check would prove nothing")
	}
}

// moduleImports maps each package of this module that pkg links (on
// Linux, with cgo) to its imports.
func moduleImports(t *testing.T, pkg string) map[string][]string {
	t.Helper()
	cmd := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", pkg)
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH=amd64", "CGO_ENABLED=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", pkg, err)
	}
	m := map[string][]string{}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && strings.HasPrefix(f[0], modulePrefix) {
			m[f[0]] = f[1:]
		}
	}
	return m
}

// TestGUILinksNoKubernetesClient: the tray and the window read a cluster
// through the server binary (app/internal/backendrpc), so that they do
// not carry client-go's size and memory when no cluster is used (issue
// 34: the tray was 20 MB on disk before it, 42 MB with it).
func TestGUILinksNoKubernetesClient(t *testing.T) {
	for _, pkg := range []string{"./cmd/mcp-sandbox-tray", "./cmd/mcp-sandbox-window"} {
		for _, goos := range platforms {
			for _, p := range deps(t, pkg, goos, true) {
				if strings.HasPrefix(p, "k8s.io/") || strings.HasPrefix(p, "sigs.k8s.io/") {
					t.Errorf("%s: %s links %s: read the cluster through the server binary (backendrpc)", goos, pkg, p)
				}
			}
		}
	}
}
