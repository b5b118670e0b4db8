package hostfs

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// hashTree maps every path below dir to its type and content hash (or
// link target), to prove a tree byte-for-byte unchanged.
func hashTree(t testing.TB, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			out[rel] = "link " + l
		case d.IsDir():
			out[rel] = "dir"
		default:
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			out[rel] = "file " + hex.EncodeToString(sum[:])
		}
		return nil
	})
	return out
}

// linksLeaving lists the symlinks below root that resolve outside it.
func linksLeaving(t testing.TB, root string) []string {
	t.Helper()
	realRoot, _ := filepath.EvalSymlinks(root)
	var out []string
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink == 0 {
			return nil
		}
		if r, err := filepath.EvalSymlinks(p); err != nil || !within(realRoot, r) {
			l, _ := os.Readlink(p)
			out = append(out, p+" -> "+l)
		}
		return nil
	})
	return out
}

// The links of issue 10's first attack: each target is clean as text but
// climbs out through another link of the same archive. By default none
// is made, and each is listed; with Links, only those that resolve inside
// the copy are made.
func TestUnpackLinksResolvedPhysically(t *testing.T) {
	data := makeTar(t,
		tarEntry{name: "top/", typ: tar.TypeDir},
		tarEntry{name: "top/a/", typ: tar.TypeDir},
		tarEntry{name: "top/a/s2", typ: tar.TypeSymlink, link: ".."},
		tarEntry{name: "top/s1", typ: tar.TypeSymlink, link: "a/s2/a/s2/a/s2/../../../home"},
		tarEntry{name: "top/sub", typ: tar.TypeSymlink, link: "a/s2/a/s2/../../outside"},
		tarEntry{name: "top/t/", typ: tar.TypeDir},
		tarEntry{name: "top/t/.bash_aliases", typ: tar.TypeSymlink, link: "../../B/payload.sh"},
		tarEntry{name: "top/ok", typ: tar.TypeSymlink, link: "a/s2/t"},
		tarEntry{name: "top/dangling", typ: tar.TypeSymlink, link: "nothing"},
	)
	for _, tc := range []struct {
		name      string
		links     bool
		wantTree  []string
		wantLinks []string
	}{
		{"default: no links", false, []string{"a/", "t/"},
			[]string{"top/a/s2", "top/dangling", "top/ok", "top/s1", "top/sub", "top/t/.bash_aliases"}},
		{"links inside only", true, []string{"a/", "a/s2 -> ..", "ok -> a/s2/t", "t/"},
			[]string{"top/dangling", "top/s1", "top/sub", "top/t/.bash_aliases"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := t.TempDir()
			root := filepath.Join(base, "root")
			must(t, os.MkdirAll(filepath.Join(base, "home"), 0o755))
			f := Fence{WriteRoot: root}
			wr, dest, err := f.WritePath("B/top", "")
			must(t, err)
			st, err := f.Unpack(context.Background(), bytes.NewReader(data), wr, dest, UnpackOptions{Links: tc.links})
			must(t, err)
			if diff := cmp.Diff(tc.wantTree, tree(t, dest)); diff != "" {
				t.Errorf("tree (-want +got):\n%s", diff)
			}
			var got []string
			for _, l := range st.SkippedLinks {
				got = append(got, l.Path)
			}
			if diff := cmp.Diff(tc.wantLinks, sortedCopy(got)); diff != "" {
				t.Errorf("skipped_links (-want +got):\n%s", diff)
			}
			if bad := linksLeaving(t, root); len(bad) > 0 {
				t.Errorf("links leaving the write root: %v", bad)
			}
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

// A host process that keeps swapping a directory of the destination for a
// symlink to outside the write root, while copies land there: 300 rounds,
// and nothing outside changes, no staging directory is left outside, and
// no link under the write root leads out.
func TestUnpackHostSwapRace(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	must(t, os.MkdirAll(filepath.Join(outside, "R", "sub"), 0o755))
	must(t, os.WriteFile(filepath.Join(outside, "R", "sub", "victim.txt"), []byte("precious"), 0o644))
	must(t, os.MkdirAll(filepath.Join(root, "R"), 0o755))
	before := hashTree(t, outside)
	f := Fence{WriteRoot: root}
	data := makeTar(t, tarEntry{name: "victim.txt", body: "from the sandbox"})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { // the swapper
		defer wg.Done()
		dir, parked := filepath.Join(root, "R", "sub"), filepath.Join(root, "R", "parked")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.RemoveAll(parked)
			os.Rename(dir, parked)
			os.Symlink(filepath.Join(outside, "R", "sub"), dir)
			os.Remove(dir)
			os.Symlink("../../outside/R/sub", dir)
			os.Remove(dir)
			os.MkdirAll(dir, 0o755)
		}
	}()
	for i := 0; i < 300; i++ {
		wr, dest, err := f.WritePath("R/sub/victim.txt", "")
		if err != nil {
			continue // refused up front: a symlink on the way
		}
		f.Unpack(context.Background(), bytes.NewReader(data), wr, dest, UnpackOptions{Overwrite: true})
	}
	close(stop)
	wg.Wait()
	if diff := cmp.Diff(before, hashTree(t, outside)); diff != "" {
		t.Errorf("outside the write root changed (-before +after):\n%s", diff)
	}
	if bad := linksLeaving(t, root); len(bad) > 0 {
		// The swapper's own links are the only ones; copy_out made none.
		for _, b := range bad {
			if !strings.Contains(b, filepath.Join("R", "sub")) {
				t.Errorf("a link leaves the write root: %s", b)
			}
		}
	}
}

// copy_in through a directory swapped for a link to a denied directory:
// the denied file never reaches the archive.
func TestPlanSwapRace(t *testing.T) {
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, ".ssh"), 0o700))
	must(t, os.WriteFile(filepath.Join(home, ".ssh", "id_ed25519"), []byte("SECRET-KEY"), 0o600))
	must(t, os.MkdirAll(filepath.Join(home, "proj", "d"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, "proj", "d", "id_ed25519"), []byte("harmless"), 0o644))
	f := Fence{ReadRoots: []string{home}, Deny: []string{filepath.Join(home, ".ssh")}, Home: home}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		d, parked := filepath.Join(home, "proj", "d"), filepath.Join(home, "proj", "parked")
		for {
			select {
			case <-stop:
				return
			default:
			}
			os.Rename(d, parked)
			os.Symlink("../.ssh", d)
			os.Remove(d)
			os.Rename(parked, d)
		}
	}()
	defer func() { close(stop); wg.Wait() }()
	for i := 0; i < 300; i++ {
		src, err := f.ReadPath("~/proj")
		if err != nil {
			continue
		}
		p, err := f.Plan(context.Background(), src, PackOptions{Name: "proj", IncludeIgnored: true})
		if err != nil {
			continue
		}
		var buf bytes.Buffer
		if err := p.WriteTar(context.Background(), &buf); err != nil {
			continue
		}
		tr := tar.NewReader(&buf)
		for h, err := tr.Next(); err == nil; h, err = tr.Next() {
			b, _ := io.ReadAll(tr)
			if strings.Contains(string(b), "SECRET") {
				t.Fatalf("round %d: %s carried the denied key", i, h.Name)
			}
		}
	}
}
