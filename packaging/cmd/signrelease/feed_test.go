package main

import (
	"bytes"
	"crypto/ed25519"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/app/update"
)

func TestClassify(t *testing.T) {
	for _, tc := range []struct {
		name, version, os, arch, kind string
	}{
		{"mcp-sandbox_1.2.0_amd64.deb", "1.2.0", "linux", "amd64", "deb"},
		{"mcp-sandbox_1.2.0-rc.1_amd64.deb", "1.2.0-rc.1", "linux", "amd64", "deb"},
		{"mcp-sandbox-1.2.0-linux-amd64.tar.xz", "1.2.0", "linux", "amd64", "tar.xz"},
		{"mcp-sandbox-1.2.0-windows-amd64-setup.exe", "1.2.0", "windows", "amd64", "setup.exe"},
		{"mcp-sandbox-1.2.0-darwin-universal.dmg", "1.2.0", "darwin", "universal", "dmg"},
		{"mcp-sandbox-1.2.0-darwin-arm64", "1.2.0", "darwin", "arm64", "server"},
		{"mcp-sandbox-1.2.0-rc.1-darwin-amd64", "1.2.0-rc.1", "darwin", "amd64", "server"},
		{"mcp-sandbox-1.2.0-windows-amd64.exe", "1.2.0", "windows", "amd64", "server"},
	} {
		v, a, err := classify(tc.name)
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		got := []string{v, a.OS, a.Arch, a.Kind}
		if diff := cmp.Diff([]string{tc.version, tc.os, tc.arch, tc.kind}, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	for _, bad := range []string{"SHA256SUMS", "feed.json", "mcp-sandbox.deb", "mcp-sandbox-1.2.0-plan9-amd64"} {
		if _, _, err := classify(bad); err == nil {
			t.Errorf("%s classified", bad)
		}
	}
}

// TestFeedRoundTrip signs two files and checks that the update package
// accepts the feed with the right key, rejects it with another, and that a
// file from another version is refused.
func TestFeedRoundTrip(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"mcp-sandbox_1.2.0_amd64.deb":          "a deb",
		"mcp-sandbox-1.2.0-linux-amd64.tar.xz": "a tarball",
	}
	var paths []string
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	f, err := makeFeed(priv, "v1.2.0", "https://example.com/notes", "", paths, time.Unix(1e9, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(f)
	parsed, err := update.ParseFeed(b)
	if err != nil {
		t.Fatal(err)
	}
	if err := parsed.Verify(priv.Public().(ed25519.PublicKey)); err != nil {
		t.Errorf("own key: %v", err)
	}
	other := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{8}, 32))
	if err := parsed.Verify(other.Public().(ed25519.PublicKey)); err == nil {
		t.Error("verified with another key")
	}
	if parsed.Version != "1.2.0" || len(parsed.Artifacts) != 2 || parsed.Artifacts[0].URL != parsed.Artifacts[0].Name {
		t.Errorf("feed = %+v", parsed)
	}
	if _, err := makeFeed(priv, "1.3.0", "", "", paths, time.Now()); err == nil {
		t.Error("files of 1.2.0 accepted into a 1.3.0 feed")
	}
}
