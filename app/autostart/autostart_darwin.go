package autostart

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

// plistFile is the LaunchAgent launchd reads at login.
func plistFile() string {
	home, _ := os.UserHomeDir()
	return filepath.Join(home, "Library", "LaunchAgents", agentLabel+".plist")
}

func location() string { return plistFile() }

func enabled() (bool, error) {
	_, err := os.Stat(plistFile())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

func enable(exe string) error {
	p := plistFile()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, launchAgentPlist(exe, p), 0o644)
}

func disable() error {
	if err := os.Remove(plistFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
