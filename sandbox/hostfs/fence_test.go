package hostfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// home builds a temporary home with a read root, a secret outside it, and
// links that try to lead out.
func home(t *testing.T) (Fence, string) {
	t.Helper()
	h := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(h, "src", "proj"), 0o755))
	must(t, os.WriteFile(filepath.Join(h, "src", "proj", "a.py"), []byte("print(1)\n"), 0o644))
	must(t, os.WriteFile(filepath.Join(h, "secret.txt"), []byte("secret"), 0o600))
	must(t, os.Symlink(filepath.Join(h, "secret.txt"), filepath.Join(h, "src", "link-out")))
	must(t, os.Symlink(filepath.Join(h, "src", "proj"), filepath.Join(h, "link-in")))
	return Fence{ReadRoots: []string{"~/src"}, WriteRoot: "~/out", Home: h, MaxBytes: 1 << 20}, h
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestReadPath(t *testing.T) {
	f, h := home(t)
	for _, tc := range []struct {
		name, in string
		want     string // "" means refused
	}{
		{"inside, with ~", "~/src/proj", filepath.Join(h, "src", "proj")},
		{"inside, absolute", filepath.Join(h, "src", "proj", "a.py"), filepath.Join(h, "src", "proj", "a.py")},
		{"dot-dot out", "~/src/../secret.txt", ""},
		{"etc passwd", "/etc/passwd", ""},
		{"traversal to etc", "~/src/../../../../etc/passwd", ""},
		{"symlink inside root pointing out", "~/src/link-out", ""},
		{"symlink outside root pointing in", "~/link-in", filepath.Join(h, "src", "proj")},
		{"relative", "src/proj", ""},
		{"newline in name", "~/src/proj\n/a.py", ""},
		{"NUL", "~/src/proj\x00", ""},
		{"missing", "~/src/nope", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := f.ReadPath(tc.in)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("ReadPath(%q) = %q, want refusal", tc.in, got)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("ReadPath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
}

func TestWritePath(t *testing.T) {
	f, h := home(t)
	out := filepath.Join(h, "out")
	must(t, os.MkdirAll(filepath.Join(out, "sub"), 0o755))
	must(t, os.Symlink(h, filepath.Join(out, "escape")))
	for _, tc := range []struct {
		name, in, def string
		want          string
		wantErr       error
	}{
		{"default", "", "sb1/result.csv", filepath.Join(out, "sb1", "result.csv"), nil},
		{"relative", "sub/r.txt", "", filepath.Join(out, "sub", "r.txt"), nil},
		{"absolute inside", filepath.Join(out, "x.txt"), "", filepath.Join(out, "x.txt"), nil},
		{"with ~", "~/out/y.txt", "", filepath.Join(out, "y.txt"), nil},
		{"dot-dot", "../secret.txt", "", "", ErrFence},
		{"deep dot-dot", "sub/../../../etc/cron.d/x", "", "", ErrFence},
		{"absolute outside", "/etc/passwd", "", "", ErrFence},
		{"the root itself", ".", "", "", ErrFence},
		{"through a symlink", "escape/secret.txt", "", "", ErrFence},
		{"newline", "a\nb", "", "", ErrFence},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got, err := f.WritePath(tc.in, tc.def)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("WritePath(%q) = %q, %v; want %v", tc.in, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("WritePath(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
			}
		})
	}
	// The write root is created on demand, private.
	f.WriteRoot = "~/new/root"
	if _, _, err := f.WritePath("a", ""); err != nil {
		t.Fatal(err)
	}
	if st, err := os.Stat(filepath.Join(h, "new", "root")); err != nil || st.Mode().Perm() != 0o700 {
		t.Errorf("write root not created 0700: %v %v", st, err)
	}
}

// FuzzWritePath: whatever a tool call passes, the result is inside the
// write root or refused.
func FuzzWritePath(f *testing.F) {
	for _, s := range []string{"", "a", "../x", "/etc/passwd", "a/../../b", "~/../x", "./.", "a//b", "..\\x", "~", "a/./../.."} {
		f.Add(s)
	}
	root := f.TempDir()
	fence := Fence{WriteRoot: root, Home: root}
	f.Fuzz(func(t *testing.T, p string) {
		r, dest, err := fence.WritePath(p, "default")
		if err != nil {
			return
		}
		if !within(r, dest) || dest == r || strings.Contains(dest, "\x00") {
			t.Fatalf("WritePath(%q) = %q, outside %q", p, dest, r)
		}
	})
}

// Credentials stay home: read_deny wins over read_roots, whether the path
// is asked for directly, through a link, or as part of a directory.
func TestReadDeny(t *testing.T) {
	h := t.TempDir()
	for name, content := range map[string]string{
		".ssh/id_ed25519":       "KEY",
		".aws/credentials":      "AWS",
		"keys-elsewhere/token":  "TOKEN",
		"proj/main.py":          "print(1)",
		"proj/.sshnot/ok.txt":   "not a denied dir",
		".config/gcloud/x.json": "GCLOUD",
	} {
		p := filepath.Join(h, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	must(t, os.Symlink(filepath.Join(h, ".ssh", "id_ed25519"), filepath.Join(h, "proj", "key-link")))
	must(t, os.Symlink(filepath.Join(h, "keys-elsewhere"), filepath.Join(h, ".gnupg"))) // a denied dir that is a link
	f := Fence{ReadRoots: []string{"~"}, Deny: []string{"~/.ssh", "~/.aws/", "~/.gnupg", "~/.config/gcloud", "relative/ignored"}, Home: h, MaxBytes: 1 << 20}

	for _, in := range []string{"~/.ssh", "~/.ssh/id_ed25519", "~/.aws/credentials", "~/proj/key-link", "~/.gnupg/token", "~/keys-elsewhere/token", "~/.config/../.ssh/id_ed25519"} {
		if got, err := f.ReadPath(in); !errors.Is(err, ErrFence) || !strings.Contains(err.Error(), "files.read_deny") {
			t.Errorf("ReadPath(%q) = %q, %v; want a read_deny refusal", in, got, err)
		}
	}
	for _, in := range []string{"~/proj", "~/proj/.sshnot/ok.txt"} {
		if _, err := f.ReadPath(in); err != nil {
			t.Errorf("ReadPath(%q): %v", in, err)
		}
	}

	// Copying the whole home skips the denied trees; the link is copied as
	// a link (its target's name, never its content).
	src, err := f.ReadPath("~")
	must(t, err)
	p, err := f.Plan(context.Background(), src, PackOptions{Name: "home", IncludeIgnored: true})
	must(t, err)
	var buf bytes.Buffer
	must(t, p.WriteTar(context.Background(), &buf))
	names := tarNames(t, buf.Bytes())
	got := strings.Join(names, "\n")
	for _, n := range names {
		n, _, _ = strings.Cut(n, " -> ")
		for _, leak := range []string{"home/.ssh", "home/.aws", "home/.config/gcloud", "home/.gnupg", "home/keys-elsewhere/token"} {
			if n == leak || strings.HasPrefix(n, leak+"/") {
				t.Errorf("the copy holds %s:\n%s", n, got)
			}
		}
	}
	for _, want := range []string{"home/proj/main.py", "home/proj/.sshnot/ok.txt", "home/proj/key-link -> " + filepath.Join(h, ".ssh", "id_ed25519")} {
		if !strings.Contains(got, want) {
			t.Errorf("the copy lacks %s:\n%s", want, got)
		}
	}
	if bytes.Contains(buf.Bytes(), []byte("KEY")) || bytes.Contains(buf.Bytes(), []byte("AWS")) || bytes.Contains(buf.Bytes(), []byte("GCLOUD")) || bytes.Contains(buf.Bytes(), []byte("TOKEN")) {
		t.Error("a denied file's content is in the copy")
	}
	if p.Stats.Skipped["in files.read_deny"] < 3 {
		t.Errorf("skipped = %v", p.Stats.Skipped)
	}
}
