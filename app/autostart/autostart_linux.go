package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// desktopFile is the XDG autostart entry (freedesktop.org's Desktop
// Application Autostart Specification).
func desktopFile() string {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" || !filepath.IsAbs(dir) {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "autostart", "mcp-sandbox-tray.desktop")
}

func location() string { return desktopFile() }

func enabled() (bool, error) {
	data, err := os.ReadFile(desktopFile())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(strings.TrimSpace(line), "=")
		if (k == "Hidden" && v == "true") || (k == "X-GNOME-Autostart-enabled" && v == "false") {
			return false, nil
		}
	}
	return true, nil
}

func enable(exe string) error {
	p := desktopFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	entry := "[Desktop Entry]\n" +
		"Type=Application\n" +
		"Name=MCP Sandbox\n" +
		"Comment=Runs code for AI assistants in disposable, hardened containers\n" +
		"Exec=" + execArg(exe) + " " + HiddenFlag + "\n" +
		// Once the tray is uninstalled, desktops skip an entry whose
		// TryExec is gone instead of failing to start it at each login.
		"TryExec=" + stringValue(exe) + "\n" +
		"Icon=mcp-sandbox\n" +
		"Terminal=false\n" +
		"Categories=Development;\n" +
		"X-GNOME-Autostart-enabled=true\n"
	return atomicfile.WriteFile(p, []byte(entry), 0o644)
}

func disable() error {
	if err := os.Remove(desktopFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// execArg quotes a path for an Exec key: inside double quotes, ", `, $ and
// \ take a backslash; the string escape rule then doubles every backslash;
// and % is written %% (Desktop Entry Specification, "The Exec key").
func execArg(p string) string {
	var b strings.Builder
	for _, r := range p {
		switch r {
		case '"', '`', '$':
			b.WriteString(`\\`)
			b.WriteRune(r)
		case '\\':
			b.WriteString(`\\\\`)
		case '%':
			b.WriteString("%%")
		default:
			b.WriteRune(r)
		}
	}
	return `"` + b.String() + `"`
}

// stringValue writes s as a Desktop Entry string value (TryExec takes the
// path itself, unquoted): backslash and control characters are escaped.
func stringValue(s string) string {
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\t", `\t`, "\r", `\r`).Replace(s)
}
