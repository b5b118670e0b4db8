package state

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Token returns the bearer token for the HTTP transport, generating and
// storing it (mode 0600) on first use.
func (s *Store) Token() (string, error) {
	p := filepath.Join(s.dir, "http-token")
	if data, err := os.ReadFile(p); err == nil {
		if t := strings.TrimSpace(string(data)); len(t) >= 32 {
			return t, nil
		}
	}
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	t := hex.EncodeToString(b)
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return "", fmt.Errorf("store token: %w", err)
	}
	defer f.Close()
	if _, err := f.WriteString(t + "\n"); err != nil {
		return "", fmt.Errorf("store token: %w", err)
	}
	return t, nil
}
