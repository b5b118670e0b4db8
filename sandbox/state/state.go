package state

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// Store is a state directory.
type Store struct {
	dir string

	instMu sync.Mutex
	inst   string // the installation id, once read (installation.go)
}

// Open returns the store in dir, creating it (mode 0700) if needed.
func Open(dir string) (*Store, error) {
	if err := os.MkdirAll(filepath.Join(dir, "sandboxes"), 0o700); err != nil {
		return nil, fmt.Errorf("open state dir: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// pausedFile exists while the tray has paused the service.
func (s *Store) pausedFile() string { return filepath.Join(s.dir, "paused") }

// Paused reports whether the service is paused: servers refuse new
// sandboxes until it is resumed.
func (s *Store) Paused() bool {
	_, err := os.Stat(s.pausedFile())
	return err == nil
}

// SetPaused pauses or resumes the service.
func (s *Store) SetPaused(paused bool) error {
	if !paused {
		if err := os.Remove(s.pausedFile()); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("resume: %w", err)
		}
		return nil
	}
	if err := os.WriteFile(s.pausedFile(), []byte("paused from the MCP Sandbox tray\n"), 0o600); err != nil {
		return fmt.Errorf("pause: %w", err)
	}
	return nil
}
