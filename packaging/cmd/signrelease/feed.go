package main

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/update"
)

// The file names packaging/build.sh gives the release files (sandbox/README.md
// §Command line and packaging), from which each artifact's os, arch and kind are read.
var namePatterns = []struct {
	re   *regexp.Regexp
	os   string // "" means: the match's "os" group
	kind string
}{
	{regexp.MustCompile(`^mcp-sandbox_(?P<version>[^_]+)_(?P<arch>amd64|arm64)\.deb$`), "linux", "deb"},
	{regexp.MustCompile(`^mcp-sandbox-(?P<version>.+)-linux-(?P<arch>amd64|arm64)\.tar\.xz$`), "linux", "tar.xz"},
	{regexp.MustCompile(`^mcp-sandbox-(?P<version>.+)-windows-(?P<arch>amd64|arm64)-setup\.exe$`), "windows", "setup.exe"},
	{regexp.MustCompile(`^mcp-sandbox-(?P<version>.+)-darwin-(?P<arch>universal|amd64|arm64)\.dmg$`), "darwin", "dmg"},
	{regexp.MustCompile(`^mcp-sandbox-(?P<version>.+)-(?P<os>linux|darwin|windows)-(?P<arch>amd64|arm64)(\.exe)?$`), "", "server"},
}

// classify reads an artifact's version, os, arch and kind from its name.
func classify(name string) (version string, a update.Artifact, err error) {
	for _, p := range namePatterns {
		m := p.re.FindStringSubmatch(name)
		if m == nil {
			continue
		}
		a = update.Artifact{Name: name, OS: p.os, Kind: p.kind}
		a.Arch = m[p.re.SubexpIndex("arch")]
		if a.OS == "" {
			a.OS = m[p.re.SubexpIndex("os")]
		}
		return m[p.re.SubexpIndex("version")], a, nil
	}
	return "", a, fmt.Errorf("%s: not a release file name (want mcp-sandbox_<version>_<arch>.deb, mcp-sandbox-<version>-linux-<arch>.tar.xz, mcp-sandbox-<version>-windows-<arch>-setup.exe, mcp-sandbox-<version>-darwin-<arch>.dmg or mcp-sandbox-<version>-<os>-<arch>[.exe], as packaging/build.sh names them)", name)
}

// describe returns a file's size and SHA-256.
func describe(path string) (update.Artifact, error) {
	f, err := os.Open(path)
	if err != nil {
		return update.Artifact{}, err
	}
	defer f.Close()
	h := sha256.New()
	n, err := io.Copy(h, f)
	if err != nil {
		return update.Artifact{}, fmt.Errorf("%s: %w", path, err)
	}
	return update.Artifact{Size: n, SHA256: hex.EncodeToString(h.Sum(nil))}, nil
}

// makeFeed describes and signs each file as an artifact of version.
func makeFeed(priv ed25519.PrivateKey, version, notes, base string, files []string, now time.Time) (*update.Feed, error) {
	version = strings.TrimPrefix(version, "v")
	if version == "" {
		return nil, errors.New("feed needs -version")
	}
	if len(files) == 0 {
		return nil, errors.New("feed needs the release files as arguments")
	}
	f := &update.Feed{Format: update.FeedFormat, Version: version, Published: now.Truncate(time.Second), NotesURL: notes}
	for _, path := range files {
		name := filepath.Base(path)
		v, a, err := classify(name)
		if err != nil {
			return nil, err
		}
		if v != version {
			return nil, fmt.Errorf("%s is version %s, the feed is %s", name, v, version)
		}
		d, err := describe(path)
		if err != nil {
			return nil, err
		}
		a.Size, a.SHA256 = d.Size, d.SHA256
		a.URL = name
		if base != "" {
			a.URL = strings.TrimSuffix(base, "/") + "/" + name
		}
		if err := update.SignArtifact(priv, version, &a); err != nil {
			return nil, err
		}
		f.Artifacts = append(f.Artifacts, a)
	}
	// What the tray will parse must parse.
	b, err := jsonBytes(f)
	if err != nil {
		return nil, err
	}
	if _, err := update.ParseFeed(b); err != nil {
		return nil, err
	}
	return f, nil
}
