package sandbox_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/inventory"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/state"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/testenv"
)

// TestPeerFiles: another process of the installation (the window) lists a
// server's sandbox's files and saves them through copy_out's write fence;
// a write_deny destination, an existing file and another installation's
// sandbox are refused.
func TestPeerFiles(t *testing.T) {
	eng, te := newEngineWith(t, engineOptions{scoped: true})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	mustExec(t, eng, sb.ID, "mkdir -p out && echo 1,2 > out/data.csv && printf '#!/bin/sh\\n' > out/run.sh && chmod 755 out/run.sh && ln -s /etc/shadow out/shadow")
	home := t.TempDir()
	root := filepath.Join(home, "saved")
	denied := filepath.Join(root, "denied")
	if err := os.MkdirAll(denied, 0o700); err != nil {
		t.Fatal(err)
	}
	cfg := testenv.Config(t)
	cfg.Files.WriteRoot, cfg.Files.WriteDeny = root, []string{denied}
	ctx := context.Background()
	p, err := sandbox.OpenPeer(ctx, te.be, te.st, cfg, testenv.Logger(t), sb.ID)
	if err != nil {
		t.Fatal(err)
	}
	list, err := p.ListFiles(ctx, sandbox.ListFilesRequest{Path: "/workspace", Recursive: true})
	entries := list.Entries
	if err != nil || list.Truncated {
		t.Fatalf("list: %v (truncated %v)", err, list.Truncated)
	}
	seen := map[string]bool{}
	for _, e := range entries {
		seen[e.Path] = true
	}
	for _, want := range []string{"/workspace/out", "/workspace/out/data.csv", "/workspace/out/run.sh", "/workspace/out/shadow"} {
		if !seen[want] {
			t.Errorf("list lacks %s: %+v", want, entries)
		}
	}
	res, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "/workspace/out", HostPath: filepath.Join(root, "out")})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 || len(res.SkippedLinks) != 1 {
		t.Errorf("copy out: %+v", res)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "out", "data.csv")); string(b) != "1,2\n" {
		t.Errorf("data.csv = %q", b)
	}
	if st, err := os.Stat(filepath.Join(root, "out", "run.sh")); err != nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh on the host: %v %v", st, err)
	}
	if _, err := os.Lstat(filepath.Join(root, "out", "shadow")); err == nil {
		t.Error("a symlink reached the host")
	}
	refused := []struct{ name, src, dest string }{
		{"write_deny", "/workspace/out/data.csv", filepath.Join(denied, "data.csv")},
		{"outside the write root", "/workspace/out/data.csv", filepath.Join(home, "elsewhere.csv")},
		{"existing file", "/workspace/out/data.csv", filepath.Join(root, "out", "data.csv")},
	}
	for _, c := range refused {
		if _, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: c.src, HostPath: c.dest}); !errors.Is(err, sandbox.ErrPolicy) {
			t.Errorf("%s: %v, want ErrPolicy", c.name, err)
		}
	}
	// An existing file is refused as ErrExists (the window then asks to
	// replace it), and replaced when asked, through the same fence.
	existing := filepath.Join(root, "out", "data.csv")
	if err := os.WriteFile(existing, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "/workspace/out/data.csv", HostPath: existing}); !errors.Is(err, hostfs.ErrExists) {
		t.Errorf("existing file: %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "old\n" {
		t.Errorf("a refused copy changed the file: %q", b)
	}
	if _, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "/workspace/out/data.csv", HostPath: existing, Overwrite: true}); err != nil {
		t.Errorf("overwrite: %v", err)
	}
	if b, _ := os.ReadFile(existing); string(b) != "1,2\n" {
		t.Errorf("after overwrite data.csv = %q", b)
	}
	// overwrite does not open the fence: a denied file stays as it is.
	keep := filepath.Join(denied, "keep.csv")
	if err := os.WriteFile(keep, []byte("keep\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := p.CopyOut(ctx, sandbox.CopyOutRequest{Path: "/workspace/out/data.csv", HostPath: keep, Overwrite: true}); !errors.Is(err, sandbox.ErrPolicy) || errors.Is(err, hostfs.ErrExists) {
		t.Errorf("overwrite in write_deny: %v, want ErrPolicy and not ErrExists", err)
	}
	if ents, _ := os.ReadDir(denied); len(ents) != 1 {
		t.Errorf("something was written in the denied directory: %v", ents)
	}
	if b, _ := os.ReadFile(keep); string(b) != "keep\n" {
		t.Errorf("overwrite changed a denied file: %q", b)
	}
	other, err := state.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sandbox.OpenPeer(ctx, te.be, other, cfg, nil, sb.ID); !errors.Is(err, inventory.ErrNotMine) {
		t.Errorf("another installation's sandbox: %v, want ErrNotMine", err)
	}
	if _, err := sandbox.OpenPeer(ctx, te.be, te.st, cfg, nil, "nosuchbox1"); !errors.Is(err, sandbox.ErrNotFound) {
		t.Errorf("unknown id: %v, want ErrNotFound", err)
	}
}
