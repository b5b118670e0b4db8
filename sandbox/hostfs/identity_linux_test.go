package hostfs

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// bind makes dst a second name of src for the test's length, or skips
// (fails under CI, which runs as root) when mounting is not permitted.
func bind(t *testing.T, src, dst string) {
	t.Helper()
	must(t, os.MkdirAll(dst, 0o755))
	if err := unix.Mount(src, dst, "", unix.MS_BIND, ""); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("mount --bind: %v (CI runs as root)", err)
		}
		t.Skipf("mount --bind is not permitted here (%v)", err)
	}
	t.Cleanup(func() { unix.Unmount(dst, unix.MNT_DETACH) })
}

// Bind mounts give a denied directory, or a directory inside one, a
// second name with no path through the denied one ("..": the mount
// point's parent). Both are refused by identity, read and write.
func TestDenyBindMounts(t *testing.T) {
	h := secretHome(t)
	must(t, os.MkdirAll(filepath.Join(h, ".ssh", "keys"), 0o700))
	must(t, os.WriteFile(filepath.Join(h, ".ssh", "keys", "k"), []byte("KEY"), 0o600))
	bind(t, filepath.Join(h, ".ssh"), filepath.Join(h, "proj", "whole"))
	bind(t, filepath.Join(h, ".ssh", "keys"), filepath.Join(h, "proj", "part"))
	f := Fence{ReadRoots: []string{"~/proj"}, Deny: []string{"~/.ssh"}, WriteRoot: h, WriteDeny: []string{"~/.ssh"}, Home: h, MaxBytes: 1 << 20}
	for _, in := range []string{"~/proj/whole", "~/proj/whole/id_rsa", "~/proj/part", "~/proj/part/k"} {
		if _, err := f.ReadPath(in); !errors.Is(err, ErrFence) {
			t.Errorf("ReadPath(%s): %v; want a refusal", in, err)
		}
		if _, _, err := planBytes(t, f, filepath.Join(h, in[2:])); !errors.Is(err, ErrFence) {
			t.Errorf("Plan(%s): %v; want a refusal", in, err)
		}
	}
	b, p, err := planBytes(t, f, filepath.Join(h, "proj"))
	must(t, err)
	if bytes.Contains(b, []byte("KEY")) || p.Stats.Skipped["in files.read_deny"] != 2 {
		t.Errorf("copy of ~/proj: skipped %v, names %q", p.Stats.Skipped, tarNames(t, b))
	}
	for _, dest := range []string{"proj/whole/authorized_keys", "proj/part/new", "proj/part/k"} {
		_, err := f.Unpack(context.Background(), bytes.NewReader(makeTar(t, tarEntry{name: "x", body: "pwned"})), h, filepath.Join(h, dest), UnpackOptions{Overwrite: true})
		if !errors.Is(err, ErrFence) {
			t.Errorf("Unpack to %s: %v; want a refusal", dest, err)
		}
	}
	if got, _ := os.ReadFile(filepath.Join(h, ".ssh", "keys", "k")); string(got) != "KEY" {
		t.Error("the key changed")
	}
	if _, err := os.Stat(filepath.Join(h, ".ssh", "keys", "new")); err == nil {
		t.Error("a file was made in ~/.ssh/keys")
	}
}
