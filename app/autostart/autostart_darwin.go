package autostart

import (
	"encoding/xml"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/atomicfile"
)

const agentLabel = "io.mcp-sandbox.tray"

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
	var b strings.Builder
	b.WriteString(`<?xml version="1.0" encoding="UTF-8"?>
<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
<plist version="1.0">
<dict>
	<key>Label</key>
	<string>` + agentLabel + `</string>
	<key>ProgramArguments</key>
	<array>
		<string>`)
	xml.EscapeText(&b, []byte(exe))
	b.WriteString(`</string>
		<string>` + HiddenFlag + `</string>
	</array>
	<key>RunAtLoad</key>
	<true/>
	<key>ProcessType</key>
	<string>Interactive</string>
</dict>
</plist>
`)
	return atomicfile.WriteFile(p, []byte(b.String()), 0o644)
}

func disable() error {
	if err := os.Remove(plistFile()); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
