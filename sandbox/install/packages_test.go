package install

import (
	"archive/tar"
	"bytes"
	"io"
	"slices"
	"strings"
	"testing"
)

func TestMergeSpecs(t *testing.T) {
	for _, tc := range []struct {
		manager  string
		old, add []string
		want     []string
	}{
		{"pip", nil, []string{"numpy"}, []string{"numpy"}},
		{"pip", []string{"NumPy==1.26", "pandas"}, []string{"numpy>=2"}, []string{"numpy>=2", "pandas"}},
		{"pip", []string{"typing_extensions"}, []string{"typing-extensions==4.12", "requests[socks]"}, []string{"typing-extensions==4.12", "requests[socks]"}},
		{"pip", []string{"zope.interface"}, []string{"Zope_Interface"}, []string{"Zope_Interface"}},
		{"npm", []string{"lodash@4", "@scope/pkg@1"}, []string{"@scope/pkg@2", "left-pad"}, []string{"lodash@4", "@scope/pkg@2", "left-pad"}},
		{"npm", []string{"@scope/pkg"}, []string{"@scope/pkg@^3"}, []string{"@scope/pkg@^3"}},
	} {
		if got := mergeSpecs(tc.manager, tc.old, tc.add); !slices.Equal(got, tc.want) {
			t.Errorf("mergeSpecs(%s, %q, %q) = %q, want %q", tc.manager, tc.old, tc.add, got, tc.want)
		}
	}
}

func TestUnitOf(t *testing.T) {
	for name, want := range map[string]string{
		".local":                              "",
		".local/lib":                          "",
		".local/lib/python3.11/site-packages": "",
		".local/lib/python3.11/site-packages/numpy":   ".local/lib/python3.11/site-packages/numpy",
		".local/lib/python3.11/site-packages/numpy/a": ".local/lib/python3.11/site-packages/numpy",
		".local/lib/python3.11/site-packages/six.py":  ".local/lib/python3.11/site-packages/six.py",
		".local/bin":                           "",
		".local/bin/f2py":                      ".local/bin/f2py",
		".local/share/jupyter/kernels/x":       ".local/share/jupyter",
		"node_modules":                         "",
		"node_modules/lodash/index.js":         "node_modules/lodash",
		"node_modules/@scope":                  "",
		"node_modules/@scope/pkg/package.json": "node_modules/@scope/pkg",
		"node_modules/.bin/tsc":                "node_modules/.bin/tsc",
		"node_modules/.package-lock.json":      "node_modules/.package-lock.json",
		"elsewhere/file":                       "",
	} {
		if got := unitOf(name); got != want {
			t.Errorf("unitOf(%q) = %q, want %q", name, got, want)
		}
	}
}

func installTar(t testing.TB, hs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(h.Name))
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			tw.Write([]byte(h.Name))
		}
	}
	tw.Close()
	return buf.Bytes()
}

func TestRewriteInstallTree(t *testing.T) {
	in := installTar(t,
		&tar.Header{Typeflag: tar.TypeDir, Name: ".local/", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: ".local/lib/python3.11/site-packages/demo/__init__.py", Mode: 0o6755, Uid: 0},
		&tar.Header{Typeflag: tar.TypeSymlink, Name: ".local/bin/demo", Linkname: "../lib/x", Mode: 0o777},
		&tar.Header{Typeflag: tar.TypeLink, Name: ".local/bin/hard", Linkname: ".local/bin/demo"},
		&tar.Header{Typeflag: tar.TypeChar, Name: ".local/bin/null", Devmajor: 1, Devminor: 3},
		&tar.Header{Typeflag: tar.TypeFifo, Name: ".local/bin/fifo"},
	)
	var out bytes.Buffer
	units, err := rewriteInstallTree(".local", 1000, 1001, bytes.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".local/lib/python3.11/site-packages/demo", ".local/bin/demo"}; !slices.Equal(units, want) {
		t.Errorf("units = %q, want %q", units, want)
	}
	var got []string
	tr := tar.NewReader(&out)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Uid != 1000 || h.Gid != 1001 || h.Mode&^0o777 != 0 {
			t.Errorf("%s: owner %d:%d mode %o", h.Name, h.Uid, h.Gid, h.Mode)
		}
		got = append(got, h.Name)
	}
	if want := []string{".local/", ".local/lib/python3.11/site-packages/demo/__init__.py", ".local/bin/demo"}; !slices.Equal(got, want) {
		t.Errorf("entries = %q, want %q", got, want)
	}

	for _, name := range []string{"../x", "/etc/passwd", ".local/../../x", ".localx/a", "node_modules/a", ".local/a\nb"} {
		in := installTar(t, &tar.Header{Typeflag: tar.TypeReg, Name: name, Mode: 0o644})
		if _, err := rewriteInstallTree(".local", 1000, 1000, bytes.NewReader(in), io.Discard); err == nil || !strings.Contains(err.Error(), "outside") {
			t.Errorf("entry %q: %v, want an error", name, err)
		}
	}
}

// FuzzRewriteInstallTree: whatever archive a helper hands back (it ran
// registry code with the network), what goes into the sandbox is files,
// directories and links below the install directory, owned by the sandbox
// user, without special mode bits, or an error.
func FuzzRewriteInstallTree(f *testing.F) {
	f.Add(installTar(f, &tar.Header{Typeflag: tar.TypeDir, Name: ".local/", Mode: 0o755},
		&tar.Header{Typeflag: tar.TypeReg, Name: ".local/bin/x", Mode: 0o4755}))
	f.Add(installTar(f, &tar.Header{Typeflag: tar.TypeReg, Name: ".local/../../etc/passwd", Mode: 0o644}))
	f.Add(installTar(f, &tar.Header{Typeflag: tar.TypeSymlink, Name: ".local/l", Linkname: "/etc"},
		&tar.Header{Typeflag: tar.TypeChar, Name: ".local/c"}))
	f.Fuzz(func(t *testing.T, data []byte) {
		var out bytes.Buffer
		_, err := rewriteInstallTree(".local", 1000, 1000, bytes.NewReader(data), &out)
		if err != nil {
			return
		}
		tr := tar.NewReader(&out)
		for {
			h, err := tr.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				t.Fatalf("the rewritten archive does not read back: %v", err)
			}
			name := strings.TrimSuffix(h.Name, "/")
			if name != ".local" && !strings.HasPrefix(name, ".local/") || strings.Contains("/"+name+"/", "/../") {
				t.Fatalf("entry outside .local: %q", h.Name)
			}
			if h.Typeflag != tar.TypeReg && h.Typeflag != tar.TypeDir && h.Typeflag != tar.TypeSymlink {
				t.Fatalf("entry %q of type %c", h.Name, h.Typeflag)
			}
			if h.Uid != 1000 || h.Gid != 1000 || h.Mode&^0o777 != 0 {
				t.Fatalf("entry %q: owner %d:%d mode %o", h.Name, h.Uid, h.Gid, h.Mode)
			}
		}
	})
}
