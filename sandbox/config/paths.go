package config

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/adrg/xdg"
)

// appDir is the directory name used under the user's config and state dirs.
const appDir = "mcp-sandbox"

// Path returns the config file's path: $MCP_SANDBOX_CONFIG if set, else
// <user config dir>/mcp-sandbox/config.toml.
func Path() string {
	if p := os.Getenv("MCP_SANDBOX_CONFIG"); p != "" {
		return p
	}
	return filepath.Join(userDir("XDG_CONFIG_HOME", ".config", func() string { return xdg.ConfigHome }), appDir, "config.toml")
}

// OwnPaths are MCP Sandbox's own places: the config file in use, the
// default config directory and the state directory. The copy tools refuse
// them in both directions whatever files.read_deny and files.write_deny
// say: the config may hold secrets (network.install_env) and decides the
// policy, and the state directory holds the HTTP token.
func OwnPaths() []string {
	return []string{Path(), filepath.Join(userDir("XDG_CONFIG_HOME", ".config", func() string { return xdg.ConfigHome }), appDir), StateDir()}
}

// StateDir returns the directory for the audit log, the pause flag, the
// HTTP token, sandbox records and logs: $MCP_SANDBOX_STATE_DIR if set, else
// <user state dir>/mcp-sandbox.
func StateDir() string {
	if p := os.Getenv("MCP_SANDBOX_STATE_DIR"); p != "" {
		return p
	}
	return filepath.Join(userDir("XDG_STATE_HOME", filepath.Join(".local", "state"), func() string { return xdg.StateHome }), appDir)
}

// userDir reads the XDG variable at call time on Linux (so tests and
// children started with another environment see their own), and asks xdg
// for the platform's place elsewhere.
func userDir(env, fallback string, platform func() string) string {
	if runtime.GOOS != "windows" && runtime.GOOS != "darwin" {
		if d := os.Getenv(env); d != "" && filepath.IsAbs(d) {
			return d
		}
		if home, err := os.UserHomeDir(); err == nil {
			return filepath.Join(home, fallback)
		}
	}
	return platform()
}

// ExpandHome replaces a leading "~" with the user's home directory.
func ExpandHome(p string) string {
	if p != "~" && !strings.HasPrefix(p, "~/") && !strings.HasPrefix(p, `~\`) {
		return p
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return p
	}
	return filepath.Join(home, p[1:])
}
