package update

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
)

func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		name    string
		setup   func(rs *releaseServer)
		opts    func(o *Options)
		want    string // version offered; "" for none
		wantErr error
	}{
		{name: "newer release is offered",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") }, want: "1.1.0"},
		{name: "v prefixes on both sides",
			setup: func(rs *releaseServer) { rs.standard("1.1.0"); rs.relabel("v1.1.0") },
			opts:  func(o *Options) { o.Current = "v1.0.0" }, want: "1.1.0"},
		{name: "same version is not offered",
			setup: func(rs *releaseServer) { rs.standard("1.0.0") }},
		{name: "older version is not offered",
			setup: func(rs *releaseServer) { rs.standard("0.9.3") }},
		{name: "1.10.0 is newer than 1.9.0",
			setup: func(rs *releaseServer) { rs.standard("1.10.0") },
			opts:  func(o *Options) { o.Current = "1.9.0" }, want: "1.10.0"},
		{name: "pre-release is not offered to a stable build",
			setup: func(rs *releaseServer) { rs.standard("1.1.0-rc.1") }},
		{name: "pre-release is offered on request",
			setup: func(rs *releaseServer) { rs.standard("1.1.0-rc.1") },
			opts:  func(o *Options) { o.Prereleases = true }, want: "1.1.0-rc.1"},
		{name: "pre-release build is offered the next pre-release",
			setup: func(rs *releaseServer) { rs.standard("1.1.0-rc.1") },
			opts:  func(o *Options) { o.Current = "1.1.0-beta.2" }, want: "1.1.0-rc.1"},
		{name: "pre-release build is offered the release",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") },
			opts:  func(o *Options) { o.Current = "1.1.0-rc.1" }, want: "1.1.0"},
		{name: "kind preference picks the tarball",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") },
			opts:  func(o *Options) { o.Kinds = []string{"tar.xz"} }, want: "1.1.0"},
		{name: "universal macOS file serves arm64",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") },
			opts:  func(o *Options) { o.OS, o.Arch, o.Kinds = "darwin", "arm64", nil }, want: "1.1.0"},
		{name: "no file for this system",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") },
			opts:  func(o *Options) { o.Arch = "riscv64" }, wantErr: ErrNoArtifact},
		{name: "bad signature",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) {
					sig, _ := base64.StdEncoding.DecodeString(a.Signature)
					sig[10] ^= 0x40
					a.Signature = base64.StdEncoding.EncodeToString(sig)
				})
			}, wantErr: ErrSignature},
		{name: "signature that is not base64",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.Signature = "not base64!" })
			}, wantErr: ErrSignature},
		{name: "signed by another key",
			setup:   func(rs *releaseServer) { rs.key = testKey(t, 2); rs.standard("1.1.0") },
			wantErr: ErrSignature},
		{name: "old signed file relabelled as a new version",
			setup:   func(rs *releaseServer) { rs.standard("0.9.0"); rs.relabel("9.9.9") },
			wantErr: ErrSignature},
		{name: "checksum changed after signing",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.SHA256 = strings.Repeat("ab", 32) })
			}, wantErr: ErrSignature},
		{name: "malformed: not JSON",
			setup: func(rs *releaseServer) { rs.setFeed([]byte("<html>moved</html>")) }, wantErr: ErrFeed},
		{name: "malformed: unknown format",
			setup:   func(rs *releaseServer) { rs.standard("1.1.0"); rs.editFeed(func(f *Feed) { f.Format = 2 }) },
			wantErr: ErrFeed},
		{name: "malformed: version",
			setup: func(rs *releaseServer) { rs.standard("1.1.0"); rs.relabel("1.1") }, wantErr: ErrFeed},
		{name: "malformed: no artifacts",
			setup: func(rs *releaseServer) { rs.publish("1.1.0") }, wantErr: ErrFeed},
		{name: "malformed: file name with a directory",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.Name = "../../.bashrc" })
			}, wantErr: ErrFeed},
		{name: "malformed: sha256 not hex",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.SHA256 = "xyz" })
			}, wantErr: ErrFeed},
		{name: "malformed: newline in a signed field",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.Kind = "deb\nsize: 1" })
			}, wantErr: ErrFeed},
		{name: "malformed: data after the object",
			setup:   func(rs *releaseServer) { rs.standard("1.1.0"); rs.setFeed(append(rs.feed, "{}"...)) },
			wantErr: ErrFeed},
		{name: "malformed: larger than 1 MiB",
			setup:   func(rs *releaseServer) { rs.setFeed(bytes.Repeat([]byte(" "), maxFeedBytes+1)) },
			wantErr: ErrFeed},
		{name: "feed not found",
			setup: func(rs *releaseServer) { rs.code["/feed.json"] = http.StatusNotFound }, wantErr: ErrFetch},
		{name: "server down",
			setup: func(rs *releaseServer) { rs.standard("1.1.0"); rs.srv.Close() }, wantErr: ErrFetch},
		{name: "plain http to another host",
			opts: func(o *Options) { o.FeedURL = "http://example.com/feed.json" }, wantErr: ErrInsecure},
		{name: "artifact URL over plain http elsewhere",
			setup: func(rs *releaseServer) {
				rs.standard("1.1.0")
				rs.editArtifacts(func(a *Artifact) { a.URL = "http://example.com/" + a.Name })
			}, wantErr: ErrInsecure},
		{name: "running version is not semantic",
			setup: func(rs *releaseServer) { rs.standard("1.1.0") },
			opts:  func(o *Options) { o.Current = "dev" }, wantErr: ErrVersion},
		{name: "no public key",
			opts: func(o *Options) { o.PublicKey = "" }, wantErr: ErrKey},
		{name: "public key of the wrong length",
			opts: func(o *Options) { o.PublicKey = base64.StdEncoding.EncodeToString([]byte("short")) }, wantErr: ErrKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newReleaseServer(t)
			if tc.setup != nil {
				tc.setup(rs)
			}
			o := rs.options("1.0.0")
			if tc.opts != nil {
				tc.opts(&o)
			}
			rel, err := Check(context.Background(), o)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil && err == nil) {
				t.Fatalf("Check error = %v, want %v", err, tc.wantErr)
			}
			switch {
			case tc.want == "" && rel != nil:
				t.Fatalf("Check offered %s, want nothing", rel.Version)
			case tc.want != "" && rel == nil:
				t.Fatalf("Check offered nothing, want %s", tc.want)
			case rel != nil:
				if rel.Version != tc.want {
					t.Errorf("offered %s, want %s", rel.Version, tc.want)
				}
				if !strings.HasPrefix(rel.Artifact.URL, rs.srv.URL+"/files/") {
					t.Errorf("artifact URL %s not resolved against the feed", rel.Artifact.URL)
				}
				if rel.NotesURL == "" {
					t.Error("notes URL lost")
				}
			}
		})
	}
}

// relabel rewrites the feed's version and leaves the signatures alone.
func (rs *releaseServer) relabel(v string) { rs.editFeed(func(f *Feed) { f.Version = v }) }

func (rs *releaseServer) editArtifacts(edit func(*Artifact)) {
	rs.editFeed(func(f *Feed) {
		for i := range f.Artifacts {
			edit(&f.Artifacts[i])
		}
	})
}

// editFeed changes the served feed after it was signed.
func (rs *releaseServer) editFeed(edit func(*Feed)) {
	var f Feed
	if err := json.Unmarshal(rs.feed, &f); err != nil {
		rs.t.Fatal(err)
	}
	edit(&f)
	b, err := json.Marshal(f)
	if err != nil {
		rs.t.Fatal(err)
	}
	rs.setFeed(b)
}

func TestCheckStopsWithContext(t *testing.T) {
	rs := newReleaseServer(t)
	rs.standard("1.1.0")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Check(ctx, rs.options("1.0.0")); !errors.Is(err, context.Canceled) || !errors.Is(err, ErrFetch) {
		t.Fatalf("Check with a cancelled context = %v", err)
	}
}

func TestFromConfig(t *testing.T) {
	pub := base64.StdEncoding.EncodeToString(testKey(t, 3).Public().(ed25519.PublicKey))
	if _, err := FromConfig(config.Update{FeedURL: "https://example.com/f.json", PublicKey: pub}); !errors.Is(err, ErrDisabled) {
		t.Errorf("check off: %v, want ErrDisabled", err)
	}
	if config.Default().Update.Check {
		t.Error("the update check is on by default; it must be off")
	}
	o, err := FromConfig(config.Update{Check: true, PublicKey: pub})
	if err != nil || o.FeedURL != DefaultFeedURL || o.PublicKey != pub || len(o.Kinds) == 0 {
		t.Errorf("FromConfig defaults = %+v, %v", o, err)
	}
	old := DefaultPublicKey
	t.Cleanup(func() { DefaultPublicKey = old })
	DefaultPublicKey = ""
	if _, err := FromConfig(config.Update{Check: true}); !errors.Is(err, ErrKey) {
		t.Errorf("no key anywhere: %v, want ErrKey", err)
	}
	DefaultPublicKey = pub
	if o, err := FromConfig(config.Update{Check: true}); err != nil || o.PublicKey != pub {
		t.Errorf("built-in key not used: %+v, %v", o, err)
	}
}

func TestInstalledKinds(t *testing.T) {
	old := dpkgList
	t.Cleanup(func() { dpkgList = old })
	dpkgList = t.TempDir() + "/none.list"
	if got := installedKinds("linux"); strings.Join(got, ",") != "tar.xz" {
		t.Errorf("tarball install: %v", got)
	}
	dpkgList = t.TempDir()
	if got := installedKinds("linux"); strings.Join(got, ",") != "deb,tar.xz" {
		t.Errorf("deb install: %v", got)
	}
	if got := installedKinds("windows"); strings.Join(got, ",") != "setup.exe" {
		t.Errorf("windows: %v", got)
	}
}
