package hostfs

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type tarEntry struct {
	name, body, link string
	typ              byte
	mode             int64
}

func makeTar(t testing.TB, entries ...tarEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, e := range entries {
		typ := e.typ
		if typ == 0 {
			typ = tar.TypeReg
		}
		mode := e.mode
		if mode == 0 {
			mode = 0o644
		}
		h := &tar.Header{Name: e.name, Typeflag: typ, Mode: mode, Linkname: e.link, Size: int64(len(e.body))}
		if typ != tar.TypeReg {
			h.Size = 0
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if typ == tar.TypeReg {
			tw.Write([]byte(e.body))
		}
	}
	tw.Close()
	return buf.Bytes()
}

// tree lists what is below dir: "name" for files (with mode), "name/" for
// directories, "name -> target" for links.
func tree(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case info.Mode()&os.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out = append(out, rel+" -> "+l)
		case info.IsDir():
			out = append(out, rel+"/")
		default:
			out = append(out, rel+" "+info.Mode().Perm().String())
		}
		return nil
	})
	sort.Strings(out)
	return out
}

func TestUnpackTree(t *testing.T) {
	root := t.TempDir()
	f := Fence{WriteRoot: root, MaxBytes: 1 << 20}
	data := makeTar(t,
		tarEntry{name: "res/", typ: tar.TypeDir, mode: 0o777},
		tarEntry{name: "res/run.sh", body: "#!/bin/sh\n", mode: 0o4755},
		tarEntry{name: "res/sub/", typ: tar.TypeDir},
		tarEntry{name: "res/sub/data.csv", body: "a,b\n"},
		tarEntry{name: "res/ok-link", typ: tar.TypeSymlink, link: "sub/data.csv"},
		tarEntry{name: "res/sub/up-link", typ: tar.TypeSymlink, link: "../run.sh"},
		tarEntry{name: "res/shadow", typ: tar.TypeSymlink, link: "/etc/shadow"},
		tarEntry{name: "res/out", typ: tar.TypeSymlink, link: "../../../etc"},
		tarEntry{name: "res/hard", typ: tar.TypeLink, link: "res/run.sh"},
		tarEntry{name: "res/dev", typ: tar.TypeChar},
		tarEntry{name: "res/fifo", typ: tar.TypeFifo},
	)
	root, dest, err := f.WritePath("sb/res", "")
	must(t, err)
	st, err := f.Unpack(context.Background(), bytes.NewReader(data), root, dest, UnpackOptions{Links: true})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ok-link -> sub/data.csv",
		"run.sh -rw-r--r--",
		"sub/",
		"sub/data.csv -rw-r--r--",
		"sub/up-link -> ../run.sh",
	}
	if diff := cmp.Diff(want, tree(t, dest)); diff != "" {
		t.Errorf("host tree (-want +got):\n%s", diff)
	}
	wantSkipped := map[string]int{"symlink not made on the host": 2, "hard link": 1, "device or special file": 2}
	if diff := cmp.Diff(wantSkipped, st.Skipped); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	if st.Files != 2 || st.Bytes != 14 {
		t.Errorf("stats %+v", st)
	}
	// No staging directory is left.
	if diff := cmp.Diff([]string{"res/"}, filterTop(tree(t, filepath.Dir(dest)))); diff != "" {
		t.Errorf("left in parent: %s", diff)
	}
}

func filterTop(entries []string) []string {
	var out []string
	for _, e := range entries {
		if !containsSlashBeforeEnd(e) {
			out = append(out, e)
		}
	}
	return out
}

func containsSlashBeforeEnd(s string) bool {
	for i := 0; i < len(s)-1; i++ {
		if s[i] == '/' {
			return true
		}
	}
	return false
}

func TestUnpackHostile(t *testing.T) {
	for _, tc := range []struct {
		name    string
		data    []byte
		wantErr error
	}{
		{"entry with ..", makeTar(t, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/../../evil", body: "x"}), ErrFence},
		{"absolute entry", makeTar(t, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "/etc/evil", body: "x"}), ErrFence},
		{"second top entry", makeTar(t, tarEntry{name: "x", body: "a"}, tarEntry{name: "y", body: "b"}), ErrFence},
		{"top is a symlink", makeTar(t, tarEntry{name: "x", typ: tar.TypeSymlink, link: "/etc/shadow"}), ErrFence},
		{"newline in name", makeTar(t, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/a\nb", body: "x"}), ErrFence},
		{"top entry is the root", makeTar(t, tarEntry{name: "/", typ: tar.TypeDir}, tarEntry{name: "/a", body: "x"}), ErrFence},
		{"top entry is ..", makeTar(t, tarEntry{name: "..", typ: tar.TypeDir}), ErrFence},
		{"later entry is the root", makeTar(t, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "./", typ: tar.TypeDir}), ErrFence},
		{"too big", makeTar(t, tarEntry{name: "x", body: string(make([]byte, 2048))}), ErrTooBig},
		// Entries the host skips count too (the stream could otherwise go
		// on for ever), and so does data the reader skips.
		{"too many skipped entries", makeTar(t, append([]tarEntry{{name: "x/", typ: tar.TypeDir}}, fifos(10)...)...), ErrTooBig},
		{"data of skipped entries", skippedData(t, 2<<20), ErrTooBig},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			f := Fence{WriteRoot: root, MaxBytes: 1024, MaxFiles: 10}
			wr, dest, err := f.WritePath("out/x", "")
			must(t, err)
			_, err = f.Unpack(context.Background(), bytes.NewReader(tc.data), wr, dest, UnpackOptions{})
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("got %v, want %v", err, tc.wantErr)
			}
			// Nothing at all is left behind, inside or outside the root.
			if got := tree(t, root); len(got) > 1 { // "out/" may exist
				t.Errorf("left behind: %v", got)
			}
		})
	}
}

func TestUnpackOverwrite(t *testing.T) {
	root := t.TempDir()
	f := Fence{WriteRoot: root}
	wr, dest, _ := f.WritePath("r.txt", "")
	must(t, os.WriteFile(dest, []byte("mine"), 0o600))
	data := makeTar(t, tarEntry{name: "r.txt", body: "theirs"})
	if _, err := f.Unpack(context.Background(), bytes.NewReader(data), wr, dest, UnpackOptions{}); !errors.Is(err, ErrExists) {
		t.Fatalf("without overwrite: %v", err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "mine" {
		t.Fatalf("file changed without overwrite: %q", b)
	}
	if _, err := f.Unpack(context.Background(), bytes.NewReader(data), wr, dest, UnpackOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(dest); string(b) != "theirs" {
		t.Fatalf("overwrite: %q", b)
	}
	// A destination that is a symlink is replaced, never written through.
	target := filepath.Join(t.TempDir(), "victim")
	must(t, os.WriteFile(target, []byte("victim"), 0o600))
	_, link, _ := f.WritePath("l.txt", "")
	must(t, os.Symlink(target, link))
	if _, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "l.txt", body: "x"})), wr, link, UnpackOptions{Overwrite: true}); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(target); string(b) != "victim" {
		t.Errorf("wrote through a symlink: %q", b)
	}
}

func TestUnpackTruncatedStreamLeavesNothing(t *testing.T) {
	root := t.TempDir()
	f := Fence{WriteRoot: root}
	data := makeTar(t, tarEntry{name: "d/", typ: tar.TypeDir}, tarEntry{name: "d/a", body: "aaaa"}, tarEntry{name: "d/b", body: string(make([]byte, 4096))})
	wr, dest, _ := f.WritePath("d", "")
	if _, err := f.Unpack(context.Background(), bytes.NewReader(data[:len(data)-3000]), wr, dest, UnpackOptions{}); err == nil {
		t.Fatal("a truncated stream was accepted")
	}
	if got := tree(t, root); len(got) != 0 {
		t.Errorf("left behind: %v", got)
	}
}

// FuzzUnpack: whatever tar stream a sandbox produces, nothing is written
// outside the destination, no file is executable, and no symlink points
// out of the copied tree.
func FuzzUnpack(f *testing.F) {
	f.Add(makeTar(f, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/a", body: "a"}))
	f.Add(makeTar(f, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/../y", body: "a"}))
	f.Add(makeTar(f, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/l", typ: tar.TypeSymlink, link: "../../etc"}, tarEntry{name: "x/l/passwd", body: "a"}))
	f.Add(makeTar(f, tarEntry{name: "x", body: "a", mode: 0o6777}))
	// The links of issue 10's attacks: a textually clean target that
	// climbs out through another link of the same archive.
	f.Add(makeTar(f, tarEntry{name: "x/", typ: tar.TypeDir}, tarEntry{name: "x/a/", typ: tar.TypeDir},
		tarEntry{name: "x/a/s2", typ: tar.TypeSymlink, link: ".."},
		tarEntry{name: "x/s1", typ: tar.TypeSymlink, link: "a/s2/a/s2/a/s2/../../../home"},
		tarEntry{name: "x/sub", typ: tar.TypeSymlink, link: "a/s2/a/s2/../../outside"},
		tarEntry{name: "x/t/", typ: tar.TypeDir},
		tarEntry{name: "x/t/.bash_aliases", typ: tar.TypeSymlink, link: "../../payload.sh"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		base := t.TempDir()
		root := filepath.Join(base, "root")
		fence := Fence{WriteRoot: root, MaxBytes: 1 << 16, MaxFiles: 64}
		wr, dest, err := fence.WritePath("out/x", "")
		if err != nil {
			t.Fatal(err)
		}
		fence.Unpack(context.Background(), bytes.NewReader(data), wr, dest, UnpackOptions{Overwrite: true, Links: true})
		filepath.Walk(base, func(p string, info os.FileInfo, err error) error {
			if err != nil || p == base || p == root {
				return nil
			}
			if !within(root, p) {
				t.Fatalf("wrote outside the root: %s", p)
			}
			if info.Mode().IsRegular() && info.Mode().Perm()&0o111 != 0 {
				t.Fatalf("executable file: %s %v", p, info.Mode())
			}
			if info.Mode()&os.ModeSymlink != 0 {
				// Physically, not as text: the link resolves, through
				// every other link, inside the copy.
				l, _ := os.Readlink(p)
				realDest, _ := filepath.EvalSymlinks(dest)
				abs, err := filepath.EvalSymlinks(p)
				if err != nil || filepath.IsAbs(l) || !within(realDest, abs) {
					t.Fatalf("symlink %s -> %s leaves the copied tree or dangles (%s, %v)", p, l, abs, err)
				}
			}
			return nil
		})
	})
}

func fifos(n int) []tarEntry {
	var out []tarEntry
	for i := range n {
		out = append(out, tarEntry{name: fmt.Sprintf("x/f%d", i), typ: tar.TypeFifo})
	}
	return out
}

// skippedData is an archive whose one entry, of a type the host skips,
// carries n bytes of data.
func skippedData(t *testing.T, n int) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	must(t, tw.WriteHeader(&tar.Header{Name: "x/", Typeflag: tar.TypeDir, Mode: 0o755}))
	must(t, tw.WriteHeader(&tar.Header{Name: "x/odd", Typeflag: 'Z', Mode: 0o644, Size: int64(n)}))
	_, err := tw.Write(make([]byte, n))
	must(t, err)
	must(t, tw.Close())
	return buf.Bytes()
}

// The symlinks of a copy are kept until its files are written: their
// targets and names are counted first. A target over 4096 bytes (a tar
// stream may carry 1 MiB) and links past maxLinkBytes are skipped and
// counted, never kept.
func TestUnpackLinkNamesBounded(t *testing.T) {
	long := string(bytes.Repeat([]byte("t"), 5000))
	mid := string(bytes.Repeat([]byte("m"), 4000))
	entries := []tarEntry{{name: "x/", typ: tar.TypeDir}, {name: "x/long", typ: tar.TypeSymlink, link: long}}
	n := maxLinkBytes/4000 + 10
	for i := range n {
		entries = append(entries, tarEntry{name: fmt.Sprintf("x/l%d", i), typ: tar.TypeSymlink, link: mid})
	}
	root := t.TempDir()
	f := Fence{WriteRoot: root, MaxBytes: 1 << 20, MaxFiles: n + 10}
	wr, dest, err := f.WritePath("out/x", "")
	must(t, err)
	st, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, entries...)), wr, dest, UnpackOptions{})
	must(t, err)
	kept := st.Skipped["symlink not made on the host"]
	if st.Skipped["symlink with a target longer than 4096 bytes"] != 1 || st.Skipped["symlink past the 4 MiB of link names kept"] < 10 || kept+st.Skipped["symlink past the 4 MiB of link names kept"] != n {
		t.Errorf("skipped: %v", st.Skipped)
	}
}
