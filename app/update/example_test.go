package update_test

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"

	"github.com/mcp-sandbox/mcp-sandbox/app/update"
)

// A release server with one signed file, and a 1.0.0 build that finds the
// new version, then downloads and verifies it.
func Example() {
	pub, priv, _ := ed25519.GenerateKey(nil)
	file := []byte("the 1.1.0 tarball")
	sum := sha256.Sum256(file)
	a := update.Artifact{Name: "mcp-sandbox-1.1.0-linux-amd64.tar.xz", OS: "linux", Arch: "amd64",
		Kind: "tar.xz", URL: "mcp-sandbox-1.1.0-linux-amd64.tar.xz", Size: int64(len(file)), SHA256: hex.EncodeToString(sum[:])}
	if err := update.SignArtifact(priv, "1.1.0", &a); err != nil {
		panic(err)
	}
	feed, _ := json.Marshal(update.Feed{Format: update.FeedFormat, Version: "1.1.0", Artifacts: []update.Artifact{a}})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/feed.json") {
			w.Write(feed)
		} else {
			w.Write(file)
		}
	}))
	defer srv.Close()

	o := update.Options{
		FeedURL:   srv.URL + "/feed.json",
		PublicKey: base64.StdEncoding.EncodeToString(pub),
		Current:   "v1.0.0",
		OS:        "linux", Arch: "amd64", Kinds: []string{"tar.xz"},
	}
	rel, err := update.Check(context.Background(), o)
	if err != nil || rel == nil {
		fmt.Println("no update:", err)
		return
	}
	fmt.Println("offer", rel.Version)
	dir, _ := os.MkdirTemp("", "update")
	defer os.RemoveAll(dir)
	path, err := update.Download(context.Background(), o, rel, dir)
	fmt.Println(filepath.Base(path), err)
	// Output:
	// offer 1.1.0
	// mcp-sandbox-1.1.0-linux-amd64.tar.xz <nil>
}
