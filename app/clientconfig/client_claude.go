package clientconfig

import (
	"os"
	"strings"
)

// Claude Desktop keeps its MCP servers in claude_desktop_config.json under
// "mcpServers", and rewrites that file itself now and then (which is why
// Status checks our entry is still there and still right).
var claudeDesktop = &Client{
	name:    "claude",
	display: "Claude Desktop",
	format:  jsonFormat{key: "mcpServers", indent: "  "},
	path: func(e Env) (string, error) {
		dir, err := claudeDesktopDir(e)
		if err != nil {
			return "", err
		}
		return e.join(dir, "claude_desktop_config.json"), nil
	},
	signs: func(e Env) []string {
		dir, _ := claudeDesktopDir(e)
		signs := append([]string{dir}, e.macApps("Claude.app")...)
		if e.goos() == "windows" {
			if local, err := e.localAppData(); err == nil {
				signs = append(signs, e.join(local, "AnthropicClaude"))
			}
		}
		return signs
	},
}

// claudeDesktopDir is Claude's config directory: under Application Support
// on macOS, the XDG config home on Linux, and on Windows %APPDATA%\Claude,
// unless the Microsoft Store (MSIX) build is installed, whose file lives
// inside its package's virtualised AppData.
func claudeDesktopDir(e Env) (string, error) {
	if e.goos() == "windows" {
		if pkg := claudeMSIXPackage(e); pkg != "" {
			return e.join(pkg, "LocalCache", "Roaming", "Claude"), nil
		}
		appData, err := e.appData()
		if err != nil {
			return "", err
		}
		return e.join(appData, "Claude"), nil
	}
	dir, err := e.userConfigDir()
	if err != nil {
		return "", err
	}
	return e.join(dir, "Claude"), nil
}

// claudeMSIXPackage returns %LOCALAPPDATA%\Packages\Claude_<publisher id>
// when that directory exists, else "".
func claudeMSIXPackage(e Env) string {
	local, err := e.localAppData()
	if err != nil {
		return ""
	}
	pkgs := e.join(local, "Packages")
	entries, err := os.ReadDir(pkgs)
	if err != nil {
		return ""
	}
	for _, d := range entries {
		if d.IsDir() && strings.HasPrefix(d.Name(), "Claude_") {
			return e.join(pkgs, d.Name())
		}
	}
	return ""
}
