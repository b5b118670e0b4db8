package hostfs

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDenyIdentity builds a project from the fuzzer's bytes (directories,
// hard links to a denied key, symlinks into the denied directory, files)
// beside a denied ~/.ssh and a ~/.SSH that a fake case-insensitive volume
// says is the same place, then copies a path of it in and a file out. No
// copy may hold a denied byte, and nothing in the denied places may
// change, whatever the names, links and spellings.
func FuzzDenyIdentity(f *testing.F) {
	f.Add([]byte{1, 0, 0, 2, 1, 1, 0, 2, 0}, "~/proj", "proj/a/x")
	f.Add([]byte{0, 0, 0, 1, 2, 0, 2, 3, 1}, "~/proj/a", ".ssh/x")
	f.Add([]byte{2, 4, 0, 2, 5, 1}, "~/proj/A/id_rsa", "proj/A/x")
	f.Add([]byte{1, 6, 0}, "~/.SSH", ".SSH/y")
	names := []string{"a", "b", "a/c", "A", "b/d", ".ssh", "x.txt", "a/c/e"}
	targets := []string{"../.ssh", "../.ssh/id_rsa", "../../.SSH", ".", "a", "../../.ssh/id_rsa"}
	f.Fuzz(func(t *testing.T, ops []byte, readPath, writePath string) {
		if len(ops) > 60 {
			return
		}
		h := t.TempDir()
		for name, content := range map[string]string{".ssh/id_rsa": "SECRET-1", ".SSH/key": "SECRET-2", "proj/ok.txt": "fine"} {
			p := filepath.Join(h, name)
			must(t, os.MkdirAll(filepath.Dir(p), 0o755))
			must(t, os.WriteFile(p, []byte(content), 0o600))
		}
		proj := filepath.Join(h, "proj")
		for i := 0; i+2 < len(ops); i += 3 {
			p := filepath.Join(proj, names[int(ops[i+1])%len(names)])
			os.MkdirAll(filepath.Dir(p), 0o755)
			switch ops[i] % 4 {
			case 0:
				os.Mkdir(p, 0o755)
			case 1:
				os.Link(filepath.Join(h, ".ssh", "id_rsa"), p)
			case 2:
				os.Symlink(targets[int(ops[i+2])%len(targets)], p)
			case 3:
				os.WriteFile(p, []byte("plain"), 0o644)
			}
		}
		fence := Fence{ReadRoots: []string{"~"}, Deny: []string{"~/.ssh"}, WriteRoot: h, WriteDeny: []string{"~/.ssh"}, Home: h,
			MaxBytes: 1 << 20, names: fakeNames{fold: true}}
		if src, err := fence.ReadPath(readPath); err == nil {
			if b, _, err := planBytes(t, fence, src); err == nil && bytes.Contains(b, []byte("SECRET")) {
				t.Fatalf("copy_in of %q (%s) holds a denied file's bytes: %q", readPath, src, tarNames(t, b))
			}
		}
		if checkName(writePath) != nil || strings.Contains(writePath, "..") || filepath.IsAbs(writePath) || filepath.Clean(writePath) == "." {
			return
		}
		// The set-up above writes through the fuzzer's own links, so it
		// may itself have changed the denied places: the fence is judged
		// against what they held just before copy_out.
		before := deniedState(h)
		dest := filepath.Join(h, writePath)
		fence.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: filepath.Base(dest), body: "pwned"})), h, dest, UnpackOptions{Overwrite: true})
		if after := deniedState(h); after != before {
			t.Fatalf("copy_out to %q changed a denied place:\nbefore %s\nafter  %s", writePath, before, after)
		}
	})
}

// deniedState describes ~/.ssh and ~/.SSH without following a link:
// every name, its type and a regular file's bytes.
func deniedState(h string) string {
	var b strings.Builder
	for _, dir := range []string{".ssh", ".SSH"} {
		filepath.WalkDir(filepath.Join(h, dir), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				fmt.Fprintf(&b, "%s: %v; ", p, err)
				return nil
			}
			fmt.Fprintf(&b, "%s %v", strings.TrimPrefix(p, h), d.Type())
			if d.Type().IsRegular() {
				content, _ := os.ReadFile(p)
				fmt.Fprintf(&b, " %q", content)
			}
			b.WriteString("; ")
			return nil
		})
	}
	return b.String()
}
