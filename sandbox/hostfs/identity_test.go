package hostfs

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeNames is a volume that ignores case and knows 8.3 short names: the
// name guard is tested on a Linux disk where those spellings are other
// files.
type fakeNames struct {
	fold  bool
	short map[string]string // short component -> long one
}

func (n fakeNames) longName(p string) string {
	parts := strings.Split(p, string(filepath.Separator))
	for i, c := range parts {
		if l, ok := n.short[strings.ToUpper(c)]; ok {
			parts[i] = l
		}
	}
	return strings.Join(parts, string(filepath.Separator))
}

func (n fakeNames) caseInsensitive(string) bool { return n.fold }

// secretHome is a home with a key in ~/.ssh and a project beside it.
func secretHome(t *testing.T) string {
	t.Helper()
	h := t.TempDir()
	for name, content := range map[string]string{
		".ssh/id_rsa":          "KEY",
		".ssh/authorized_keys": "ssh-ed25519 AAAA me",
		"proj/main.py":         "print(1)",
	} {
		p := filepath.Join(h, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	return h
}

// planBytes copies src as copy_in would and returns the stream.
func planBytes(t *testing.T, f Fence, src string) ([]byte, *Plan, error) {
	t.Helper()
	p, err := f.Plan(context.Background(), src, PackOptions{Name: "x", IncludeIgnored: true})
	if err != nil {
		return nil, nil, err
	}
	var buf bytes.Buffer
	err = p.WriteTar(context.Background(), &buf)
	return buf.Bytes(), p, err
}

// A hard link and a symlink chain are other names of the key: refused
// when asked for, left out of a directory's copy.
func TestReadDenyByIdentity(t *testing.T) {
	h := secretHome(t)
	must(t, os.Link(filepath.Join(h, ".ssh", "id_rsa"), filepath.Join(h, "proj", "notes.txt")))
	must(t, os.Symlink(filepath.Join(h, ".ssh"), filepath.Join(h, "proj", "l1")))
	must(t, os.Symlink("l1/id_rsa", filepath.Join(h, "proj", "l2")))
	f := Fence{ReadRoots: []string{"~/proj"}, Deny: []string{"~/.ssh"}, Home: h, MaxBytes: 1 << 20}
	for _, in := range []string{"~/proj/notes.txt", "~/proj/l2", "~/proj/l1/id_rsa"} {
		if _, err := f.ReadPath(in); !errors.Is(err, ErrFence) {
			t.Errorf("ReadPath(%s): %v; want a refusal", in, err)
		}
	}
	// Plan of the file itself (ReadPath bypassed): refused through the
	// handle.
	if _, _, err := planBytes(t, f, filepath.Join(h, "proj", "notes.txt")); !errors.Is(err, ErrFence) {
		t.Errorf("Plan of the hard link: %v; want a refusal", err)
	}
	src, err := f.ReadPath("~/proj")
	must(t, err)
	b, p, err := planBytes(t, f, src)
	must(t, err)
	if bytes.Contains(b, []byte("KEY")) {
		t.Error("the key is in the copy of ~/proj")
	}
	if p.Stats.Skipped["in files.read_deny"] != 1 {
		t.Errorf("skipped = %v, want the hard link", p.Stats.Skipped)
	}
}

// A hard link made between the plan and the stream is refused through the
// handle the bytes come from.
func TestReadDenySwapForHardLink(t *testing.T) {
	h := secretHome(t)
	f := Fence{ReadRoots: []string{"~/proj"}, Deny: []string{"~/.ssh"}, Home: h, MaxBytes: 1 << 20}
	p, err := f.Plan(context.Background(), filepath.Join(h, "proj"), PackOptions{Name: "x"})
	must(t, err)
	main := filepath.Join(h, "proj", "main.py")
	must(t, os.Remove(main))
	must(t, os.Link(filepath.Join(h, ".ssh", "id_rsa"), main))
	var buf bytes.Buffer
	if err := p.WriteTar(context.Background(), &buf); !errors.Is(err, ErrFence) || bytes.Contains(buf.Bytes(), []byte("KEY")) {
		t.Errorf("WriteTar after a swap for a hard link: %v", err)
	}
}

// With a fake volume that ignores case and has short names, other
// spellings of a denied place are refused by name, even where (on this
// disk) they are other files.
func TestReadDenyNameGuard(t *testing.T) {
	h := t.TempDir()
	for _, name := range []string{".SSH/id_rsa", ".Ssh/id_rsa", "APPDAT~1/Roaming/Claude/claude_desktop_config.json", "AppData/Roaming/CLAUDE/x.json", "proj/ok.txt"} {
		p := filepath.Join(h, name)
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		content := "SECRET"
		if strings.HasPrefix(name, "proj/") {
			content = "fine"
		}
		must(t, os.WriteFile(p, []byte(content), 0o600))
	}
	names := fakeNames{fold: true, short: map[string]string{"APPDAT~1": "AppData"}}
	f := Fence{ReadRoots: []string{"~"}, Deny: []string{"~/.ssh", "~/AppData/Roaming/Claude"}, Home: h, MaxBytes: 1 << 20, names: names}
	for _, in := range []string{"~/.SSH/id_rsa", "~/.Ssh", "~/APPDAT~1/Roaming/Claude/claude_desktop_config.json", "~/appdat~1/roaming/claude", "~/AppData/Roaming/CLAUDE/x.json"} {
		if _, err := f.ReadPath(in); !errors.Is(err, ErrFence) || !strings.Contains(err.Error(), "files.read_deny") {
			t.Errorf("ReadPath(%s): %v; want a read_deny refusal", in, err)
		}
	}
	if _, err := f.ReadPath("~/proj/ok.txt"); err != nil {
		t.Errorf("ReadPath(~/proj/ok.txt): %v", err)
	}
	b, _, err := planBytes(t, f, h)
	must(t, err)
	if bytes.Contains(b, []byte("SECRET")) {
		t.Errorf("a denied spelling's content is in the copy of the home: %v", tarNames(t, b))
	}
	// The same volume seen as case-sensitive: only the short name guard.
	f.names = fakeNames{short: names.short}
	if _, err := f.ReadPath("~/.SSH/id_rsa"); err != nil {
		t.Errorf("on a case-sensitive volume ~/.SSH is another directory: %v", err)
	}
}

// The real probe: this test's temporary directory is on a case-sensitive
// Linux file system.
func TestCaseProbe(t *testing.T) {
	d := t.TempDir()
	must(t, os.Mkdir(filepath.Join(d, "Probe"), 0o755))
	want := false
	if _, err := os.Stat(filepath.Join(d, "PROBE")); err == nil {
		want = true // a case-insensitive disk (macOS, Windows)
	}
	if got := (osNames{}).caseInsensitive(filepath.Join(d, "Probe", "missing")); got != want {
		t.Errorf("caseInsensitive = %v, want %v", got, want)
	}
}

func fileHash(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		return "missing"
	}
	s := sha256.Sum256(b)
	return string(s[:])
}

// With the whole home as the write root, copy_out's unpack refuses every
// protected place, by name, by identity through another name of its
// directory, and as a place still to be made; nothing changes.
func TestWriteDeny(t *testing.T) {
	h := secretHome(t)
	must(t, os.WriteFile(filepath.Join(h, ".bashrc"), []byte("# mine\n"), 0o644))
	must(t, os.MkdirAll(filepath.Join(h, ".config", "mcp-sandbox"), 0o755))
	must(t, os.WriteFile(filepath.Join(h, ".config", "mcp-sandbox", "config.toml"), []byte("[files]\n"), 0o600))
	must(t, os.Symlink(".ssh", filepath.Join(h, "keys")))
	must(t, os.Symlink(".config", filepath.Join(h, "cfg")))
	protected := []string{".bashrc", ".ssh/authorized_keys", ".ssh/id_rsa", ".config/mcp-sandbox/config.toml"}
	before := map[string]string{}
	for _, p := range protected {
		before[p] = fileHash(t, filepath.Join(h, p))
	}
	f := Fence{WriteRoot: h, Home: h, WriteDeny: []string{"~/.bashrc", "~/.ssh", "~/.config/autostart", "~/.config/mcp-sandbox"}}
	for _, dest := range []string{
		".bashrc", ".ssh/authorized_keys", ".ssh/new", "keys/authorized_keys", // by name; through a link (identity)
		".config/autostart/evil.desktop", "cfg/autostart/evil.desktop", // not there yet: by name and by its parent
		".config", ".config/mcp-sandbox/config.toml", "cfg/mcp-sandbox/config.toml",
	} {
		for _, overwrite := range []bool{false, true} {
			top := filepath.Base(dest)
			_, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: top, body: "pwned"})), h, filepath.Join(h, dest), UnpackOptions{Overwrite: overwrite})
			if !errors.Is(err, ErrFence) || !strings.Contains(err.Error(), "files.write_deny") {
				t.Errorf("Unpack to %s (overwrite %v): %v; want a write_deny refusal", dest, overwrite, err)
			}
		}
	}
	for _, p := range protected {
		if got := fileHash(t, filepath.Join(h, p)); got != before[p] {
			t.Errorf("%s changed", p)
		}
	}
	for _, p := range []string{".config/autostart", ".ssh/new"} {
		if _, err := os.Lstat(filepath.Join(h, p)); err == nil {
			t.Errorf("%s was created", p)
		}
	}
	// Elsewhere in the home, copy_out still writes.
	if _, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "r.txt", body: "ok"})), h, filepath.Join(h, "out", "r.txt"), UnpackOptions{}); err != nil {
		t.Errorf("Unpack to out/r.txt: %v", err)
	}
}

// "$PATH" in files.write_deny stands for every directory of PATH.
func TestWriteDenyPath(t *testing.T) {
	h := t.TempDir()
	bin := filepath.Join(h, "bin")
	must(t, os.Mkdir(bin, 0o755))
	t.Setenv("PATH", "/usr/bin"+string(os.PathListSeparator)+bin)
	f := Fence{WriteRoot: h, Home: h, WriteDeny: []string{"$PATH"}}
	_, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "ls", body: "x"})), h, filepath.Join(bin, "ls"), UnpackOptions{})
	if !errors.Is(err, ErrFence) {
		t.Errorf("Unpack into a PATH directory: %v", err)
	}
}
