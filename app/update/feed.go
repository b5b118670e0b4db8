package update

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// FeedFormat is the feed format this package reads and writes.
const FeedFormat = 1

// Limits on what is read from the network.
const (
	maxFeedBytes     = 1 << 20
	MaxArtifactBytes = 2 << 30 // larger sizes in a feed are refused
)

// Feed is the release feed document (see the package documentation).
type Feed struct {
	Format    int        `json:"format"`
	Version   string     `json:"version"`
	Published time.Time  `json:"published,omitzero"`
	NotesURL  string     `json:"notes_url,omitempty"`
	Artifacts []Artifact `json:"artifacts"`
}

// Artifact is one downloadable file of a release.
type Artifact struct {
	Name      string `json:"name"`      // file name, no directories
	OS        string `json:"os"`        // GOOS
	Arch      string `json:"arch"`      // GOARCH, or "universal" (macOS)
	Kind      string `json:"kind"`      // deb, tar.xz, setup.exe, dmg, server
	URL       string `json:"url"`       // absolute, or relative to the feed
	Size      int64  `json:"size"`      // bytes
	SHA256    string `json:"sha256"`    // lowercase hex
	Signature string `json:"signature"` // base64 ed25519, see SignArtifact
}

// ParseFeed decodes and validates a feed. It does not verify signatures:
// Check does, for the artifact it offers, and Feed.Verify for all.
func ParseFeed(b []byte) (*Feed, error) {
	var f Feed
	d := json.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&f); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFeed, err)
	}
	if d.More() {
		return nil, fmt.Errorf("%w: data after the JSON object", ErrFeed)
	}
	if f.Format != FeedFormat {
		return nil, fmt.Errorf("%w: format %d, this build reads %d", ErrFeed, f.Format, FeedFormat)
	}
	f.Version = strings.TrimPrefix(f.Version, "v")
	if _, err := parseVersion(f.Version); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrFeed, err)
	}
	if len(f.Artifacts) == 0 {
		return nil, fmt.Errorf("%w: no artifacts", ErrFeed)
	}
	for i := range f.Artifacts {
		if err := f.Artifacts[i].validate(); err != nil {
			return nil, fmt.Errorf("%w: artifact %d: %v", ErrFeed, i, err)
		}
	}
	return &f, nil
}

// validate checks the fields a signature is made over, so that the signed
// text is unambiguous, and that the name is a plain file name.
func (a *Artifact) validate() error {
	for k, v := range map[string]string{"name": a.Name, "os": a.OS, "arch": a.Arch, "kind": a.Kind, "url": a.URL} {
		if v == "" || strings.ContainsFunc(v, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			return fmt.Errorf("%s is empty or has control characters", k)
		}
	}
	if a.Name != path.Base(a.Name) || strings.ContainsAny(a.Name, `/\:`) || strings.HasPrefix(a.Name, ".") {
		return fmt.Errorf("name %q is not a plain file name", a.Name)
	}
	if a.Size <= 0 || a.Size > MaxArtifactBytes {
		return fmt.Errorf("size %d out of range", a.Size)
	}
	if b, err := hex.DecodeString(a.SHA256); err != nil || len(b) != 32 || a.SHA256 != strings.ToLower(a.SHA256) {
		return fmt.Errorf("sha256 %q is not 64 lowercase hex digits", a.SHA256)
	}
	return nil
}

// pick returns the artifact for goos/goarch of the first kind in kinds that
// the release has.
func (f *Feed) pick(goos, goarch string, kinds []string) (Artifact, error) {
	for _, k := range kinds {
		for _, a := range f.Artifacts {
			if a.OS == goos && (a.Arch == goarch || a.Arch == "universal") && a.Kind == k {
				return a, nil
			}
		}
	}
	return Artifact{}, fmt.Errorf("%w: %s/%s, any of %v", ErrNoArtifact, goos, goarch, kinds)
}

// defaultKinds is the installer a person on goos would download.
func defaultKinds(goos string) []string {
	switch goos {
	case "windows":
		return []string{"setup.exe"}
	case "darwin":
		return []string{"dmg"}
	default:
		return []string{"tar.xz"}
	}
}

// dpkgList exists when the tray was installed from the .deb.
var dpkgList = "/var/lib/dpkg/info/mcp-sandbox.list"

// installedKinds prefers the kind of package the running copy came from:
// on Linux, the .deb when dpkg knows the package.
func installedKinds(goos string) []string {
	kinds := defaultKinds(goos)
	if goos == "linux" {
		if _, err := os.Stat(dpkgList); err == nil {
			kinds = slices.Insert(kinds, 0, "deb")
		}
	}
	return kinds
}
