package update

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// A test release server: a signed feed at /feed.json and the files under
// /files/, each of which a test can tamper with.
type releaseServer struct {
	t    *testing.T
	srv  *httptest.Server
	key  ed25519.PrivateKey
	pub  string // base64, as the config holds it
	mu   sync.Mutex
	feed []byte            // served as is
	body map[string][]byte // served at /files/NAME
	code map[string]int    // a status to answer for a path instead
}

func testKey(t *testing.T, seed byte) ed25519.PrivateKey {
	t.Helper()
	return ed25519.NewKeyFromSeed(bytes.Repeat([]byte{seed}, ed25519.SeedSize))
}

func newReleaseServer(t *testing.T) *releaseServer {
	rs := &releaseServer{t: t, key: testKey(t, 1), body: map[string][]byte{}, code: map[string]int{}}
	rs.pub = base64.StdEncoding.EncodeToString(rs.key.Public().(ed25519.PublicKey))
	rs.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rs.mu.Lock()
		defer rs.mu.Unlock()
		if c := rs.code[r.URL.Path]; c != 0 {
			w.WriteHeader(c)
			return
		}
		if r.URL.Path == "/feed.json" {
			w.Header().Set("Content-Type", "application/json")
			w.Write(rs.feed)
			return
		}
		if b, ok := rs.body[strings.TrimPrefix(r.URL.Path, "/files/")]; ok {
			w.Write(b)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(rs.srv.Close)
	return rs
}

// artifact makes a signed artifact for content, served at /files/NAME.
func (rs *releaseServer) artifact(version, name, goos, arch, kind string, content []byte) Artifact {
	a := Artifact{Name: name, OS: goos, Arch: arch, Kind: kind, URL: "files/" + name,
		Size: int64(len(content)), SHA256: sha256hex(content)}
	if err := SignArtifact(rs.key, version, &a); err != nil {
		rs.t.Fatal(err)
	}
	rs.mu.Lock()
	rs.body[name] = content
	rs.mu.Unlock()
	return a
}

// publish serves a feed for version with the given artifacts.
func (rs *releaseServer) publish(version string, arts ...Artifact) {
	b, err := json.Marshal(Feed{Format: FeedFormat, Version: version, NotesURL: "https://example.com/notes", Artifacts: arts})
	if err != nil {
		rs.t.Fatal(err)
	}
	rs.setFeed(b)
}

func (rs *releaseServer) setFeed(b []byte) {
	rs.mu.Lock()
	rs.feed = b
	rs.mu.Unlock()
}

// options checks as a linux/amd64 tarball install at version current.
func (rs *releaseServer) options(current string) Options {
	return Options{FeedURL: rs.srv.URL + "/feed.json", PublicKey: rs.pub, Current: current,
		OS: "linux", Arch: "amd64", Kinds: []string{"deb", "tar.xz"}}
}

// standard publishes version with a .deb and a tarball for linux/amd64.
func (rs *releaseServer) standard(version string) {
	rs.publish(version,
		rs.artifact(version, "mcp-sandbox_"+version+"_amd64.deb", "linux", "amd64", "deb", []byte("deb "+version)),
		rs.artifact(version, "mcp-sandbox-"+version+"-linux-amd64.tar.xz", "linux", "amd64", "tar.xz", []byte("tarball "+version)),
		rs.artifact(version, "mcp-sandbox-"+version+"-windows-amd64-setup.exe", "windows", "amd64", "setup.exe", []byte("setup "+version)),
		rs.artifact(version, "mcp-sandbox-"+version+"-darwin-universal.dmg", "darwin", "universal", "dmg", []byte("dmg "+version)),
	)
}

func sha256hex(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
