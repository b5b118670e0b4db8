package trayapp

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mcp-sandbox/mcp-sandbox/app/internal/apptest"
	"github.com/mcp-sandbox/mcp-sandbox/app/traymenu"
	"github.com/mcp-sandbox/mcp-sandbox/app/update"
)

// releaseServer serves a signed feed for version 99.0.0 with one file for
// this system, on 127.0.0.1; tamper flips a byte of the file it serves.
type releaseServer struct {
	*httptest.Server
	tamper atomic.Bool
}

func newReleaseServer(t *testing.T, priv ed25519.PrivateKey) *releaseServer {
	t.Helper()
	body := []byte("an MCP Sandbox 99.0.0 tarball, for the test")
	sum := sha256.Sum256(body)
	a := update.Artifact{Name: "mcp-sandbox-99.0.0-" + runtime.GOOS + "-" + runtime.GOARCH + ".tar.xz",
		OS: runtime.GOOS, Arch: runtime.GOARCH, Kind: "tar.xz", Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])}
	a.URL = a.Name
	if err := update.SignArtifact(priv, "99.0.0", &a); err != nil {
		t.Fatal(err)
	}
	// The .deb kind is preferred where dpkg knows the package: offer the
	// same file as both, each signed for its kind.
	d := a
	d.Kind, d.Name, d.URL = "deb", "mcp-sandbox_99.0.0_"+runtime.GOARCH+".deb", "mcp-sandbox_99.0.0_"+runtime.GOARCH+".deb"
	if err := update.SignArtifact(priv, "99.0.0", &d); err != nil {
		t.Fatal(err)
	}
	feed, err := json.Marshal(update.Feed{Format: 1, Version: "99.0.0", Artifacts: []update.Artifact{a, d}})
	if err != nil {
		t.Fatal(err)
	}
	rs := &releaseServer{}
	rs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/feed.json":
			w.Write(feed)
		case "/" + a.Name, "/" + d.Name:
			b := append([]byte(nil), body...)
			if rs.tamper.Load() {
				b[0] ^= 1
			}
			w.Write(b)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(rs.Close)
	return rs
}

func updateConfig(t *testing.T, home, feedURL string, pub ed25519.PublicKey) {
	t.Helper()
	cfg := filepath.Join(home, ".config", "mcp-sandbox", "config.toml")
	extra := "\n[update]\ncheck = true\nfeed_url = \"" + feedURL + "\"\npublic_key = \"" + base64.StdEncoding.EncodeToString(pub) + "\"\n"
	if err := os.WriteFile(cfg, []byte(apptest.ConfigTOML()+extra), 0o600); err != nil {
		t.Fatal(err)
	}
}

// With "Check for updates" on, a newer release signed with the configured
// key is offered in the menu and by a notification; a tampered download
// is refused and deleted, the intact one is kept after verification; a
// feed signed with another key is refused with a clear message.
func TestTrayUpdate(t *testing.T) {
	skipUnderRace(t)
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	rs := newReleaseServer(t, priv)
	d := startDesktop(t)
	p, m := d.startTray(t, nil, "--hidden")
	install := traymenu.InstallLabel("99.0.0")
	if items, err := m.layout(); err != nil {
		t.Fatal(err)
	} else if it, ok := find(items, install); ok && it.Visible {
		t.Fatalf("%q offered with the setting off", install)
	}

	// The setting turned on (as the Settings tab saves it): a check at once.
	updateConfig(t, p.home, rs.URL+"/feed.json", pub)
	items, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		it, ok := find(items, install)
		return ok && it.Visible
	})
	if err != nil {
		t.Fatalf("no %q in the menu: %v\nlog:\n%s", install, err, p.log())
	}
	d.waitNote(t, "the update notification", "MCP Sandbox: MCP Sandbox 99.0.0 is available")

	updates := filepath.Join(p.home, ".local", "state", "mcp-sandbox", "updates")
	rs.tamper.Store(true)
	it, _ := find(items, install)
	if err := m.click(it.ID); err != nil {
		t.Fatal(err)
	}
	d.waitNote(t, "the refusal of a tampered download", "Update refused", "not the one the release was signed for")
	if left, _ := os.ReadDir(updates); len(left) != 0 {
		t.Errorf("a refused download left files: %v", left)
	}

	rs.tamper.Store(false)
	if err := m.click(it.ID); err != nil {
		t.Fatal(err)
	}
	d.waitNote(t, "the verified download", "99.0.0 was downloaded and verified")
	if left, _ := os.ReadDir(updates); len(left) != 1 {
		t.Errorf("after a verified download, %s holds %v, want the one file", updates, left)
	}

	// A feed signed with a key that is not the configured one.
	_, other, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	foreign := newReleaseServer(t, other)
	updateConfig(t, p.home, foreign.URL+"/feed.json", pub)
	click(t, m, traymenu.LabelCheckUpdates)
	d.waitNote(t, "the refusal of a foreign-key feed", "nothing was offered", "not signed by the MCP Sandbox release key")
	if _, err := m.waitMenu(30*time.Second, func(items []menuItem) bool {
		it, ok := find(items, install)
		return !ok || !it.Visible
	}); err != nil {
		t.Errorf("the offer stayed in the menu after a refused check: %v", err)
	}
	p.stop(t)
}
