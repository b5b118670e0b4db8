package app

import (
	"os"
	"os/exec"
	"path/filepath"
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
// belong to the window process (README, "Set up and run": the tray and
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
