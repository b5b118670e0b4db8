package sandbox_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/backend"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/docker"
)

// bothFilePaths runs a file-tool test through the sandbox's agent and,
// with an engine the server carries no agent for, through docker exec.
func bothFilePaths(t *testing.T, test func(t *testing.T, eng *sandbox.Engine, sb *sandbox.Sandbox)) {
	t.Run("agent", func(t *testing.T) {
		eng, _ := newEngine(t, nil)
		sb := mustCreate(t, eng, sandbox.CreateRequest{})
		test(t, eng, sb)
		if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
			t.Errorf("exec path = %q (%s), want the agent", p, why)
		}
	})
	t.Run("docker exec", func(t *testing.T) {
		eng, _ := newEngineWith(t, engineOptions{wrap: func(be *docker.Backend) backend.Backend { return foreignArch{be} }})
		sb := mustCreate(t, eng, sandbox.CreateRequest{})
		test(t, eng, sb)
		if p, _ := execPath(t, eng, sb.ID); p != sandbox.ExecDocker {
			t.Errorf("exec path = %q, want docker exec", p)
		}
	})
}

func TestWriteReadListFiles(t *testing.T) { bothFilePaths(t, testWriteReadListFiles) }

func testWriteReadListFiles(t *testing.T, eng *sandbox.Engine, sb *sandbox.Sandbox) {
	ctx := context.Background()

	for _, tc := range []struct{ path, want string }{
		{"notes.txt", "/workspace/notes.txt"},
		{"deep/er/data.csv", "/workspace/deep/er/data.csv"},
		{"/workspace/abs.txt", "/workspace/abs.txt"},
		{"/tmp/scratch.txt", "/tmp/scratch.txt"},
	} {
		res, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: tc.path, Content: []byte("hello " + tc.path)})
		if err != nil || res.Path != tc.want {
			t.Fatalf("write %s: %+v %v", tc.path, res, err)
		}
		got, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: tc.path})
		if err != nil || string(got.Data) != "hello "+tc.path {
			t.Fatalf("read %s: %q %v", tc.path, got.Data, err)
		}
	}
	// The sandbox user owns what was written, and can change it.
	res := mustExec(t, eng, sb.ID, statOwnerMode+" deep/er/data.csv deep; echo more >> deep/er/data.csv && echo ok")
	if res.Stdout != "1000 644\n1000 755\nok\n" {
		t.Errorf("ownership: %q %q", res.Stdout, res.Stderr)
	}
	// Append and binary content.
	if _, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "notes.txt", Content: []byte(" again"), Append: true}); err != nil {
		t.Fatal(err)
	}
	got, _ := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "notes.txt"})
	if string(got.Data) != "hello notes.txt again" {
		t.Errorf("append: %q", got.Data)
	}
	bin := []byte{0, 1, 2, 255, 254}
	eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "b.bin", Content: bin})
	got, _ = eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "b.bin"})
	if !bytes.Equal(got.Data, bin) {
		t.Errorf("binary: %v", got.Data)
	}
	// Offset and max_bytes.
	eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "digits", Content: []byte("0123456789")})
	got, _ = eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "digits", Offset: 3, MaxBytes: 4})
	if string(got.Data) != "3456" || !got.Truncated || got.Size != 10 {
		t.Errorf("offset read: %+v", got)
	}

	list, err := eng.ListFiles(ctx, sb.ID, sandbox.ListFilesRequest{})
	entries := list.Entries
	if err != nil || list.Truncated {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, fmt.Sprintf("%s dir=%v", e.Path, e.IsDir))
	}
	sort.Strings(names)
	want := []string{"/workspace/abs.txt dir=false", "/workspace/b.bin dir=false", "/workspace/deep dir=true", "/workspace/digits dir=false", "/workspace/notes.txt dir=false"}
	if diff := cmp.Diff(want, filterInternal(names)); diff != "" {
		t.Errorf("list (-want +got):\n%s", diff)
	}
	list, _ = eng.ListFiles(ctx, sb.ID, sandbox.ListFilesRequest{Path: "deep", Recursive: true})
	entries = list.Entries
	if len(entries) != 2 || entries[1].Path != "/workspace/deep/er/data.csv" || entries[1].Size == 0 {
		t.Errorf("recursive: %+v", entries)
	}
	if list, err := eng.ListFiles(ctx, sb.ID, sandbox.ListFilesRequest{Path: "/tmp"}); err != nil || len(list.Entries) == 0 {
		t.Errorf("list /tmp: %+v %v", list.Entries, err)
	}
}

func filterInternal(names []string) []string {
	var out []string
	for _, n := range names {
		if !strings.Contains(n, "/.mcp-sandbox") && !strings.Contains(n, "/.local") {
			out = append(out, n)
		}
	}
	return out
}

// TestFileToolsHostile: paths that try to leave the sandbox's areas, and
// links that try to reach root-only files, are refused.
func TestFileToolsHostile(t *testing.T) { bothFilePaths(t, testFileToolsHostile) }

func testFileToolsHostile(t *testing.T, eng *sandbox.Engine, sb *sandbox.Sandbox) {
	ctx := context.Background()
	mustExec(t, eng, sb.ID, "ln -s /etc/shadow shadow-link; ln -s /etc etc-link; ln -s ../../etc/passwd rel-link; ln -s notes.txt ok-link; echo hi > notes.txt; mkdir -p d; ln -s /tmp d/tmp-link; echo t > /tmp/t.txt")
	for _, tc := range []struct {
		name string
		op   func() error
		want error
	}{
		{"read ../../etc/passwd", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "../../etc/passwd"})
			return err
		}, sandbox.ErrPolicy},
		{"read /etc/shadow", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "/etc/shadow"})
			return err
		}, sandbox.ErrPolicy},
		{"read link to /etc/shadow", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "shadow-link"})
			return err
		}, sandbox.ErrPolicy},
		{"read through linked dir", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "etc-link/shadow"})
			return err
		}, sandbox.ErrPolicy},
		{"read relative link out", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "rel-link"})
			return err
		}, sandbox.ErrPolicy},
		{"list linked dir", func() error {
			_, err := eng.ListFiles(ctx, sb.ID, sandbox.ListFilesRequest{Path: "etc-link"})
			return err
		}, sandbox.ErrPolicy},
		{"write through linked dir", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "etc-link/evil", Content: []byte("x")})
			return err
		}, sandbox.ErrPolicy},
		{"write /etc", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "/etc/evil", Content: []byte("x")})
			return err
		}, sandbox.ErrPolicy},
		{"write newline name", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "a\nb", Content: []byte("x")})
			return err
		}, sandbox.ErrInvalid},
		{"write too big", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "big", Content: make([]byte, 17<<20)})
			return err
		}, sandbox.ErrInvalid},
		{"read a directory", func() error { _, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "d"}); return err }, sandbox.ErrInvalid},
		{"read missing", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "nope.txt"})
			return err
		}, sandbox.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	// Links that stay inside the areas are followed.
	if got, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "ok-link"}); err != nil || string(got.Data) != "hi\n" {
		t.Errorf("link inside the workspace: %q %v", got.Data, err)
	}
	if got, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "d/tmp-link/t.txt"}); err != nil || string(got.Data) != "t\n" {
		t.Errorf("link into /tmp: %q %v", got.Data, err)
	}
	// /etc/shadow was never changed or read: the image still has it intact.
	if res := mustExec(t, eng, sb.ID, "ls /etc/evil 2>&1 || echo absent"); !strings.Contains(res.Stdout, "absent") {
		t.Errorf("/etc/evil: %q", res.Stdout)
	}
}

// TestCopyInOut copies a project in, changes it in the sandbox, and copies
// the result out, checking the host disk.
func TestCopyInOut(t *testing.T) {
	home := t.TempDir()
	proj := filepath.Join(home, "src", "proj")
	writeTree(t, proj, map[string]string{
		"main.py": "print('in the sandbox')\n", "lib/util.py": "X = 1\n",
		".gitignore": "*.log\n", "debug.log": "noise", ".git/HEAD": "ref: x",
	})
	os.Symlink("/etc/passwd", filepath.Join(proj, "passwd-link"))
	out := filepath.Join(home, "out")
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Files.ReadRoots = []string{filepath.Join(home, "src")}
		c.Files.WriteRoot = out
		c.Files.MaxCopyMB = 1
	})
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	ctx := context.Background()

	res, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: proj})
	if err != nil {
		t.Fatal(err)
	}
	if res.DestPath != "/workspace/proj" || res.Files != 3 || res.Skipped[".git"] != 1 || res.Skipped["gitignored"] != 1 {
		t.Errorf("copy_in: %+v", res)
	}
	r := mustExec(t, eng, sb.ID, "cd proj && python3 main.py && ls -A | sort | tr '\\n' ' ' && readlink passwd-link && "+statOwner+" main.py")
	if r.Stdout != "in the sandbox\n.gitignore lib main.py passwd-link /etc/passwd\n1000\n" {
		t.Errorf("in the sandbox: %q %q", r.Stdout, r.Stderr)
	}
	// A single file, to a chosen place.
	if res, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: filepath.Join(proj, "main.py"), DestPath: "/workspace/x/renamed.py"}); err != nil || res.DestPath != "/workspace/x/renamed.py" || res.Files != 1 {
		t.Errorf("copy_in file: %+v %v", res, err)
	}

	mustExec(t, eng, sb.ID, "mkdir -p result/sub && echo 1,2 > result/sub/data.csv && printf '#!/bin/sh\\n' > result/run.sh && chmod 755 result/run.sh && ln -s /etc/shadow result/shadow && ln -s sub/data.csv result/ok")
	outRes, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "result"})
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(out, sb.ID, "result")
	if outRes.HostPath != dest || outRes.Files != 2 || len(outRes.SkippedLinks) != 2 {
		t.Errorf("copy_out: %+v", outRes)
	}
	if b, _ := os.ReadFile(filepath.Join(dest, "sub", "data.csv")); string(b) != "1,2\n" {
		t.Errorf("data.csv = %q", b)
	}
	if st, _ := os.Stat(filepath.Join(dest, "run.sh")); st == nil || st.Mode().Perm()&0o111 != 0 {
		t.Errorf("run.sh mode on the host: %v", st)
	}
	if _, err := os.Lstat(filepath.Join(dest, "shadow")); err == nil {
		t.Error("a link to /etc/shadow reached the host")
	}
	// By default no link at all is made on the host; each is listed.
	if _, err := os.Lstat(filepath.Join(dest, "ok")); err == nil {
		t.Error("copy_out made a link with files.copy_out_links off")
	}
	links := map[string]string{}
	for _, l := range outRes.SkippedLinks {
		links[l.Path] = l.Target
	}
	if diff := cmp.Diff(map[string]string{"result/ok": "sub/data.csv", "result/shadow": "/etc/shadow"}, links); diff != "" {
		t.Errorf("skipped_links (-want +got):\n%s", diff)
	}
	// Again without overwrite: refused, host unchanged.
	if _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "result"}); !errors.Is(err, sandbox.ErrPolicy) {
		t.Errorf("second copy without overwrite: %v", err)
	}
	if _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "result", Overwrite: true}); err != nil {
		t.Errorf("with overwrite: %v", err)
	}
}

// TestCopyHostile: every hostile case of the issue, with the host disk
// checked afterwards.
func TestCopyHostile(t *testing.T) {
	home := t.TempDir()
	src := filepath.Join(home, "src")
	writeTree(t, src, map[string]string{"ok.txt": "ok", ".ssh/id_ed25519": "KEY"})
	secret := filepath.Join(home, "secret.txt")
	os.WriteFile(secret, []byte("secret"), 0o600)
	os.Symlink(secret, filepath.Join(src, "to-secret"))
	out := filepath.Join(home, "out")
	// The engine first: without one the test skips before it writes
	// 100 000 files.
	eng, _ := newEngine(t, func(c *config.Config) {
		c.Files.ReadRoots = []string{src}
		c.Files.ReadDeny = []string{filepath.Join(src, ".ssh")}
		c.Files.WriteRoot = out
		c.Files.MaxCopyMB = 20
	})
	// A 10 GB file (sparse: it takes no disk) and a directory of 100 000 files.
	big, _ := os.Create(filepath.Join(src, "huge.bin"))
	big.Truncate(10 << 30)
	big.Close()
	many := filepath.Join(src, "many")
	os.MkdirAll(many, 0o755)
	for i := 0; i < 100000; i++ {
		f, err := os.Create(filepath.Join(many, fmt.Sprint(i)))
		if err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	ctx := context.Background()
	mustExec(t, eng, sb.ID, "ln -s /etc/shadow shadow; head -c 30000000 /dev/zero > big; printf x > \"$(printf 'new\\nline')\"; mkdir nl && printf y > \"nl/$(printf 'a\\nb')\"")

	for _, tc := range []struct {
		name string
		op   func() error
		want error
	}{
		{"copy_in ../../etc/passwd", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: src + "/../../../etc/passwd"})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in /etc/passwd", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: "/etc/passwd"})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in a link out of the root", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: filepath.Join(src, "to-secret")})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in a key in read_deny", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: filepath.Join(src, ".ssh", "id_ed25519")})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in 10 GB", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: filepath.Join(src, "huge.bin")})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in 100 000 files", func() error { _, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: many}); return err }, sandbox.ErrPolicy},
		{"copy_in newline in name", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: src + "/ok\n.txt"})
			return err
		}, sandbox.ErrPolicy},
		{"copy_in dest outside", func() error {
			_, err := eng.CopyIn(ctx, sb.ID, sandbox.CopyInRequest{HostPath: filepath.Join(src, "ok.txt"), DestPath: "/etc/ok.txt"})
			return err
		}, sandbox.ErrPolicy},
		{"copy_out to ../", func() error {
			_, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "big", HostPath: "../escape"})
			return err
		}, sandbox.ErrPolicy},
		{"copy_out to absolute outside", func() error {
			_, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "big", HostPath: filepath.Join(home, "escape")})
			return err
		}, sandbox.ErrPolicy},
		{"copy_out link to /etc/shadow", func() error { _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "shadow"}); return err }, sandbox.ErrPolicy},
		{"copy_out over the size cap", func() error { _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "big"}); return err }, sandbox.ErrPolicy},
		{"copy_out a name with a newline", func() error { _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "nl"}); return err }, sandbox.ErrPolicy},
		{"copy_out /etc", func() error { _, err := eng.CopyOut(ctx, sb.ID, sandbox.CopyOutRequest{Path: "/etc"}); return err }, sandbox.ErrPolicy},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	// Nothing reached the host outside the fences, and nothing half-written
	// stayed inside the write root.
	if b, _ := os.ReadFile(secret); string(b) != "secret" {
		t.Error("the secret changed")
	}
	if _, err := os.Stat(filepath.Join(home, "escape")); err == nil {
		t.Error("copy_out wrote outside the write root")
	}
	var left []string
	filepath.Walk(out, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Errorf("files left in the write root: %v", left)
	}
	// And the sandbox did not receive the refused copies.
	if r := mustExec(t, eng, sb.ID, "ls /workspace"); strings.Contains(r.Stdout, "huge.bin") || strings.Contains(r.Stdout, "many") {
		t.Errorf("refused copies arrived: %q", r.Stdout)
	}
}

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestFileToolsThroughAgent: what the agent's file work adds to the
// fence. A link in /tmp that leads out is refused too; a FIFO, a
// directory in the way, or a file where a directory is expected are
// refused as invalid requests, without waiting; a write replaces a file
// the sandbox user may not change in place but may replace; an append
// past the cap is refused and leaves the file as it was.
func TestFileToolsThroughAgent(t *testing.T) {
	eng, _ := newEngine(t, nil)
	sb := mustCreate(t, eng, sandbox.CreateRequest{})
	ctx := context.Background()
	mustExec(t, eng, sb.ID, "ln -s /etc/passwd /tmp/pw; mkfifo fifo; mkdir adir; echo x > afile; echo ro > ro.txt; chmod 444 ro.txt; head -c 16000000 /dev/zero > big")
	for _, tc := range []struct {
		name string
		op   func() error
		want error
	}{
		{"read a /tmp link out", func() error { _, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "/tmp/pw"}); return err }, sandbox.ErrPolicy},
		{"list a /tmp link out", func() error {
			_, err := eng.ListFiles(ctx, sb.ID, sandbox.ListFilesRequest{Path: "/tmp/pw"})
			return err
		}, sandbox.ErrPolicy},
		{"read a fifo", func() error { _, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "fifo"}); return err }, sandbox.ErrInvalid},
		{"write over a directory", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "adir", Content: []byte("x")})
			return err
		}, sandbox.ErrInvalid},
		{"write below a file", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "afile/x", Content: []byte("x")})
			return err
		}, sandbox.ErrInvalid},
		{"append past the cap", func() error {
			_, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "big", Content: make([]byte, 1<<20), Append: true})
			return err
		}, sandbox.ErrInvalid},
		{"read past the end", func() error {
			_, err := eng.ReadFile(ctx, sb.ID, sandbox.ReadFileRequest{Path: "afile", Offset: 10})
			return err
		}, sandbox.ErrInvalid},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.op(); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
	if res, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "ro.txt", Content: []byte("new")}); err != nil || res.Bytes != 3 {
		t.Errorf("replace a read-only file: %+v %v", res, err)
	}
	if res, err := eng.WriteFile(ctx, sb.ID, sandbox.WriteFileRequest{Path: "ro.txt", Content: []byte("+"), Append: true}); err != nil || res.Bytes != 4 {
		t.Errorf("append: %+v %v", res, err)
	}
	r := mustExec(t, eng, sb.ID, "cat ro.txt; echo; wc -c < big; ls -A | grep -c mcp-sandbox-write || true")
	if r.Stdout != "new+\n16000000\n0\n" {
		t.Errorf("after the writes: %q %q", r.Stdout, r.Stderr)
	}
	if p, why := execPath(t, eng, sb.ID); p != sandbox.ExecAgent {
		t.Errorf("exec path = %q (%s), want the agent", p, why)
	}
}
