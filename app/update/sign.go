package update

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
)

// signedHeader starts every signed message, so a signature made with the
// release key for anything else can never pass as an artifact's.
const signedHeader = "mcp-sandbox release artifact v1\n"

// SignedMessage is the exact text an artifact's signature covers: the
// header line, then one "key: value" line each for the version (without a
// leading "v") and the artifact's name, os, arch, kind, size and sha256.
// The fields are validated first (no control characters), so the text
// cannot be read two ways. The URL is not covered: a file may move, its
// bytes may not.
func SignedMessage(version string, a *Artifact) ([]byte, error) {
	if err := a.validate(); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFeed, err)
	}
	version = strings.TrimPrefix(version, "v")
	if _, err := parseVersion(version); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFeed, err)
	}
	var b strings.Builder
	b.WriteString(signedHeader)
	for _, kv := range [][2]string{
		{"version", version}, {"name", a.Name}, {"os", a.OS}, {"arch", a.Arch},
		{"kind", a.Kind}, {"size", strconv.FormatInt(a.Size, 10)}, {"sha256", a.SHA256},
	} {
		b.WriteString(kv[0] + ": " + kv[1] + "\n")
	}
	return []byte(b.String()), nil
}

// SignArtifact sets a.Signature to priv's signature over
// SignedMessage(version, a).
func SignArtifact(priv ed25519.PrivateKey, version string, a *Artifact) error {
	msg, err := SignedMessage(version, a)
	if err != nil {
		return err
	}
	a.Signature = base64.StdEncoding.EncodeToString(ed25519.Sign(priv, msg))
	return nil
}

// verifyArtifact checks a's signature by pub for version.
func verifyArtifact(pub ed25519.PublicKey, version string, a *Artifact) error {
	msg, err := SignedMessage(version, a)
	if err != nil {
		return err
	}
	sig, err := base64.StdEncoding.DecodeString(a.Signature)
	if err != nil || len(sig) != ed25519.SignatureSize || !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("%w: %s %s", ErrSignature, a.Name, version)
	}
	return nil
}

// Verify checks every artifact's signature by pub (the release tooling
// uses it; Check verifies only the artifact it offers).
func (f *Feed) Verify(pub ed25519.PublicKey) error {
	for i := range f.Artifacts {
		if err := verifyArtifact(pub, f.Version, &f.Artifacts[i]); err != nil {
			return err
		}
	}
	return nil
}

// ParsePublicKey decodes a release public key: base64 of the 32-byte
// ed25519 key, as config's update.public_key holds it.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	if s == "" {
		return nil, fmt.Errorf("%w: set update.public_key in the config file", ErrKey)
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	if err != nil || len(b) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%w: update.public_key is not base64 of %d bytes", ErrKey, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(b), nil
}

// ParsePrivateKey decodes a release signing key: base64 of the 32-byte
// seed or of the 64-byte private key.
func ParsePrivateKey(s string) (ed25519.PrivateKey, error) {
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(s))
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: signing key is not base64: %v", ErrKey, err)
	case len(b) == ed25519.SeedSize:
		return ed25519.NewKeyFromSeed(b), nil
	case len(b) == ed25519.PrivateKeySize:
		return ed25519.PrivateKey(b), nil
	}
	return nil, fmt.Errorf("%w: signing key has %d bytes, want %d or %d", ErrKey, len(b), ed25519.SeedSize, ed25519.PrivateKeySize)
}
