package traywin

import (
	"encoding/json"
	"os"
	"path/filepath"
)

// TrayFile is tray.json in the state directory: what only the tray knows,
// for the window to show. The tray rewrites it when it changes; the window
// follows it with fsnotify. Everything else the window reads where it
// lives (Docker, the config file, the pause flag).
const TrayFile = "tray.json"

// HTTPInfo describes the tray's `serve --http` child.
type HTTPInfo struct {
	// Enabled is set when tray.http_port is not 0.
	Enabled bool   `json:"enabled"`
	URL     string `json:"url,omitempty"`
	Token   string `json:"token,omitempty"`
	State   string `json:"state"`
}

// TrayInfo is the content of TrayFile.
type TrayInfo struct {
	PID  int      `json:"pid"`
	HTTP HTTPInfo `json:"http"`
	// Offer is a newer release the tray offers, "" when none.
	Offer string `json:"offer,omitempty"`
}

// ReadTrayFile reads what the running tray wrote in stateDir.
func ReadTrayFile(stateDir string) (TrayInfo, error) {
	var ti TrayInfo
	b, err := os.ReadFile(filepath.Join(stateDir, TrayFile))
	if err != nil {
		return ti, err
	}
	err = json.Unmarshal(b, &ti)
	return ti, err
}
