package traywin

import (
	"os"
	"strings"
)

// noDisplayOS on Linux: an X display (DISPLAY, with its socket present
// when it is a local one) or a Wayland one (WAYLAND_DISPLAY) is needed.
func noDisplayOS(getenv func(string) string) string {
	if getenv("WAYLAND_DISPLAY") != "" {
		return ""
	}
	d := getenv("DISPLAY")
	if d == "" {
		return "no display: DISPLAY and WAYLAND_DISPLAY are unset; start mcp-sandbox-tray in a desktop session (the MCP server, mcp-sandbox, needs none)"
	}
	// ":N" or ":N.S" is the local socket /tmp/.X11-unix/XN; other forms
	// (host:N, a launchd path) are left to the X library.
	if num, ok := strings.CutPrefix(d, ":"); ok {
		num, _, _ = strings.Cut(num, ".")
		if _, err := os.Stat("/tmp/.X11-unix/X" + num); err != nil {
			return "no display: DISPLAY=" + d + " but no X server listens there; start mcp-sandbox-tray in a desktop session (the MCP server, mcp-sandbox, needs none)"
		}
	}
	return ""
}
