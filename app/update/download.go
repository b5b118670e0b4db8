package update

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Download fetches r's file into dir and returns its path. The bytes go to
// a temporary file first; only when their size and SHA-256 match the
// artifact, and the artifact's signature verifies with o.PublicKey, is the
// file renamed to its name in dir. Otherwise nothing is left behind and the
// error wraps ErrChecksum, ErrSignature or ErrFetch. Running the installer
// is the caller's decision.
func Download(ctx context.Context, o Options, r *Release, dir string) (string, error) {
	o = o.withDefaults()
	pub, err := ParsePublicKey(o.PublicKey)
	if err != nil {
		return "", err
	}
	a := r.Artifact
	// Verify again: r may not have come from Check.
	if err := verifyArtifact(pub, r.Version, &a); err != nil {
		return "", err
	}
	u, err := checkURL(a.URL, nil)
	if err != nil {
		return "", err
	}
	resp, err := get(ctx, o.Client, u.String())
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.ContentLength > a.Size {
		return "", fmt.Errorf("%w: %s is %d bytes, the release says %d", ErrChecksum, a.Name, resp.ContentLength, a.Size)
	}

	tmp, err := os.CreateTemp(dir, ".download-*")
	if err != nil {
		return "", fmt.Errorf("download %s: %w", a.Name, err)
	}
	keep := false
	defer func() {
		if !keep {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	h := sha256.New()
	n, err := io.Copy(io.MultiWriter(tmp, h), io.LimitReader(resp.Body, a.Size+1))
	if err != nil {
		return "", fmt.Errorf("%w %s: %w", ErrFetch, u.Redacted(), err)
	}
	if n != a.Size {
		return "", fmt.Errorf("%w: %s is %d bytes, the release says %d", ErrChecksum, a.Name, n, a.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != a.SHA256 {
		return "", fmt.Errorf("%w: %s has SHA-256 %s, the release says %s", ErrChecksum, a.Name, got, a.SHA256)
	}
	if err := tmp.Sync(); err != nil {
		return "", fmt.Errorf("download %s: %w", a.Name, err)
	}
	if err := tmp.Close(); err != nil {
		return "", fmt.Errorf("download %s: %w", a.Name, err)
	}
	dst := filepath.Join(dir, a.Name) // a plain file name: validate checked it
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return "", fmt.Errorf("download %s: %w", a.Name, err)
	}
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return "", fmt.Errorf("download %s: %w", a.Name, err)
	}
	keep = true
	return dst, nil
}
