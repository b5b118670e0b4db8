package update

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"testing"
)

func TestDownload(t *testing.T) {
	for _, tc := range []struct {
		name    string
		tamper  func(rs *releaseServer, rel *Release)
		wantErr error
	}{
		{name: "verified file is saved"},
		{name: "tampered file, same size",
			tamper: func(rs *releaseServer, rel *Release) {
				rs.body[rel.Artifact.Name] = bytes.Repeat([]byte("X"), int(rel.Artifact.Size))
			}, wantErr: ErrChecksum},
		{name: "file shorter than the release says",
			tamper:  func(rs *releaseServer, rel *Release) { rs.body[rel.Artifact.Name] = []byte("deb") },
			wantErr: ErrChecksum},
		{name: "file longer than the release says",
			tamper: func(rs *releaseServer, rel *Release) {
				rs.body[rel.Artifact.Name] = append(rs.body[rel.Artifact.Name], "and a payload"...)
			}, wantErr: ErrChecksum},
		{name: "checksum edited to match a tampered file",
			tamper: func(rs *releaseServer, rel *Release) {
				evil := []byte("evil 1.1.0")
				rs.body[rel.Artifact.Name] = evil
				rel.Artifact.Size, rel.Artifact.SHA256 = int64(len(evil)), sha256hex(evil)
			}, wantErr: ErrSignature},
		{name: "version edited in the release",
			tamper:  func(rs *releaseServer, rel *Release) { rel.Version = "9.0.0" },
			wantErr: ErrSignature},
		{name: "server error",
			tamper: func(rs *releaseServer, rel *Release) {
				rs.code["/files/"+rel.Artifact.Name] = http.StatusInternalServerError
			}, wantErr: ErrFetch},
		{name: "server down",
			tamper:  func(rs *releaseServer, rel *Release) { rs.srv.Close() },
			wantErr: ErrFetch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := newReleaseServer(t)
			rs.standard("1.1.0")
			o := rs.options("1.0.0")
			rel, err := Check(context.Background(), o)
			if err != nil || rel == nil {
				t.Fatalf("Check = %v, %v", rel, err)
			}
			if tc.tamper != nil {
				rs.mu.Lock()
				tc.tamper(rs, rel)
				rs.mu.Unlock()
			}
			dir := t.TempDir()
			path, err := Download(context.Background(), o, rel, dir)
			if !errors.Is(err, tc.wantErr) || (tc.wantErr != nil && err == nil) {
				t.Fatalf("Download error = %v, want %v", err, tc.wantErr)
			}
			entries, _ := os.ReadDir(dir)
			if tc.wantErr != nil {
				if len(entries) != 0 {
					t.Errorf("a failed download left %v behind", entries)
				}
				return
			}
			if want := filepath.Join(dir, "mcp-sandbox_1.1.0_amd64.deb"); path != want {
				t.Errorf("path = %s, want %s", path, want)
			}
			got, err := os.ReadFile(path)
			if err != nil || string(got) != "deb 1.1.0" {
				t.Errorf("saved %q, %v", got, err)
			}
			if len(entries) != 1 {
				t.Errorf("dir holds %v, want only the file", entries)
			}
		})
	}
}

// TestDownloadWrongKey: a Release that verified under one key does not
// download under another (the key is checked again, not trusted).
func TestDownloadWrongKey(t *testing.T) {
	rs := newReleaseServer(t)
	rs.standard("1.1.0")
	o := rs.options("1.0.0")
	rel, err := Check(context.Background(), o)
	if err != nil || rel == nil {
		t.Fatalf("Check = %v, %v", rel, err)
	}
	o.PublicKey = base64.StdEncoding.EncodeToString(testKey(t, 9).Public().(ed25519.PublicKey))
	if _, err := Download(context.Background(), o, rel, t.TempDir()); !errors.Is(err, ErrSignature) {
		t.Fatalf("Download with another key = %v, want ErrSignature", err)
	}
}
