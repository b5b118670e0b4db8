package state

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// installationFile holds the installation id, written once per state
// directory.
const installationFile = "installation-id"

// validInstallation is the form of an installation id: 128 random bits in
// hex.
var validInstallation = regexp.MustCompile(`^[0-9a-f]{32}$`)

// InstallationID returns the id of this state directory's installation,
// creating it on first use. Every server, `mcp-sandbox` command and tray
// that shares the state directory is the same installation and labels
// (and recognises) its sandboxes with this id.
//
// The file is created whole and exclusively: the id is written to a
// temporary file, which is then hard-linked to its name (a link, unlike a
// rename, fails when the name exists), so two first servers agree on one
// id and no reader ever sees a half-written file. Where the file system
// has no hard links, the file is created with O_EXCL instead. A file that
// is there but malformed is an error: a fresh id would disown every
// sandbox of the old one.
func (s *Store) InstallationID() (string, error) {
	s.instMu.Lock()
	defer s.instMu.Unlock()
	if s.inst != "" {
		return s.inst, nil
	}
	id, err := s.readInstallation()
	if errors.Is(err, os.ErrNotExist) {
		id, err = s.createInstallation()
	}
	if err != nil {
		return "", err
	}
	s.inst = id
	return id, nil
}

func (s *Store) installationPath() string { return filepath.Join(s.dir, installationFile) }

func (s *Store) readInstallation() (string, error) {
	data, err := os.ReadFile(s.installationPath())
	if err != nil {
		return "", fmt.Errorf("read installation id: %w", err)
	}
	id := strings.TrimSpace(string(data))
	if !validInstallation.MatchString(id) {
		return "", fmt.Errorf("installation id in %s is malformed (%d bytes; it must be 32 hex digits): remove the file to start a new installation (the old one's sandboxes then count as another installation's: `mcp-sandbox ps --all` shows them)", s.installationPath(), len(data))
	}
	return id, nil
}

func (s *Store) createInstallation() (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make installation id: %w", err)
	}
	id := hex.EncodeToString(b)
	tmp, err := os.CreateTemp(s.dir, "."+installationFile+".tmp-*")
	if err != nil {
		return "", fmt.Errorf("write installation id: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, werr := tmp.WriteString(id + "\n")
	serr := tmp.Sync()
	if err := errors.Join(werr, serr, tmp.Close()); err != nil {
		return "", fmt.Errorf("write installation id: %w", err)
	}
	err = os.Link(tmp.Name(), s.installationPath())
	switch {
	case err == nil:
		return id, nil
	case errors.Is(err, os.ErrExist):
		return s.readInstallation() // another process was first
	}
	// No hard links here: create the name exclusively and write it.
	f, err := os.OpenFile(s.installationPath(), os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return s.readInstallation()
	}
	if err != nil {
		return "", fmt.Errorf("write installation id: %w", err)
	}
	_, werr = f.WriteString(id + "\n")
	serr = f.Sync()
	if err := errors.Join(werr, serr, f.Close()); err != nil {
		return "", fmt.Errorf("write installation id: %w", err)
	}
	return id, nil
}
